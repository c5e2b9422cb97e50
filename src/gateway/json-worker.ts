/**
 * The worker thread of json-worker-pool.ts: runs prediction/json.ts on one large body at a time and
 * posts back the JSON text as bytes (their buffer transferred, not copied) or the refusal to answer.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { GoogleApiError } from './google-errors.js';
import { parseJsonRequest, serializeUpstreamRequest, vertexAnswer } from './prediction/json.js';
import type { JsonTask, JsonTaskReply } from './json-worker-pool.js';

function run(task: JsonTask): { bytes: Buffer; instanceCount?: number } {
  const [first] = task.body;
  const body =
    task.body.length === 1 && first !== undefined
      ? Buffer.from(first.buffer, first.byteOffset, first.byteLength)
      : Buffer.concat(task.body);
  if (task.kind === 'request') {
    const json = parseJsonRequest(body);
    // No protocol: the call is refused after this check for a reason the caller reads once its body is valid.
    const text = task.protocol === undefined ? '' : serializeUpstreamRequest(task.protocol, json, task.modelId);
    return { bytes: Buffer.from(text), instanceCount: json.instances.length };
  }
  return { bytes: Buffer.from(vertexAnswer(task.method, task.protocol, body, task.instanceCount, task.model)) };
}

function reply(id: number, task: JsonTask): void {
  let out: JsonTaskReply;
  try {
    const { bytes, instanceCount } = run(task);
    // A large Buffer owns its ArrayBuffer (small ones share Node's pool and are copied instead).
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    out = { id, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), instanceCount };
    parentPort?.postMessage(out, owned ? [bytes.buffer as ArrayBuffer] : []);
    return;
  } catch (err) {
    out =
      err instanceof GoogleApiError
        ? { id, refusal: { status: err.status, message: err.message, httpCode: err.httpCode } }
        : { id, failure: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  parentPort?.postMessage(out);
}

/**
 * Below the event loop's priority: on a busy machine the cores are shared by the event loop and these
 * threads, and the scheduler would split them evenly, so the small calls waited for a large one's JSON
 * work as before. On Linux the nice value is per thread (setpriority(2) on a thread id), and
 * /proc/thread-self names this thread's id. Elsewhere the threads keep the process's priority.
 */
export const JSON_WORKER_NICE = 10;
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, JSON_WORKER_NICE);
} catch {
  // Not Linux, or not allowed: same priority as the event loop.
}

parentPort?.on('message', (message: { id: number; task: JsonTask }) => reply(message.id, message.task));
