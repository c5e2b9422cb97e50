/**
 * Worker threads for the JSON work of large prediction bodies. Parsing a 1.4 MB :predict body,
 * building the model server's request and reading its answer back costs the event loop tens of
 * milliseconds; every other caller's call, however small, would wait behind it. Bodies from `largeBodyBytes` up are handed
 * to this pool instead; smaller ones stay on the event loop, where a worker round trip would cost more
 * than the work. Bounded: one worker per core, at most `maxQueued` tasks waiting (beyond: 503, as a
 * Google front end answers when overloaded). A worker that dies fails its task (a 500) and is replaced.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ContainerProtocol } from '../api/prediction/v1/container-spec.js';
import { Counter } from 'prom-client';
import { metricsRegistry } from '../base/metrics.js';
import { GoogleApiError, type GoogleStatus } from './google-errors.js';
import type { ServingModel } from './prediction/json.js';

/** Default size from which a body's JSON work leaves the event loop. */
export const DEFAULT_LARGE_BODY_BYTES = 256 * 1024;

export const gatewayJsonWorkerTasks = new Counter({
  name: 'endpoint_operator_gateway_json_worker_tasks_total',
  help: "JSON work of large prediction bodies done on worker threads, by kind (request: the caller's body; answer: the model server's) and outcome (ok, refused: a 4xx/5xx for the caller, failed: a worker fault, overloaded: the queue was full).",
  labelNames: ['kind', 'outcome'],
  registers: [metricsRegistry],
});

/** `body`: the body's bytes in the pieces they were received in (joined on the worker, not on the event loop). */
export type JsonTask =
  | {
      readonly kind: 'request';
      readonly body: readonly Uint8Array[];
      readonly protocol: ContainerProtocol | undefined;
      readonly modelId: string;
    }
  | {
      readonly kind: 'answer';
      readonly body: readonly Uint8Array[];
      readonly method: 'predict' | 'explain';
      readonly protocol: ContainerProtocol;
      readonly instanceCount: number;
      readonly model: ServingModel;
    };

export type JsonTaskReply =
  | { readonly id: number; readonly bytes: Uint8Array; readonly instanceCount: number | undefined }
  | {
      readonly id: number;
      readonly refusal: { readonly status: GoogleStatus; readonly message: string; readonly httpCode: number };
    }
  | { readonly id: number; readonly failure: string };

export interface JsonTaskResult {
  readonly bytes: Buffer;
  /** For a request task: how many instances it holds. */
  readonly instanceCount: number | undefined;
}

interface Pending {
  readonly id: number;
  readonly task: JsonTask;
  readonly transfer: readonly ArrayBuffer[];
  readonly resolve: (result: JsonTaskResult) => void;
  readonly reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: Pending | undefined;
}

/**
 * The memory of the pieces that own all of it, once each. Moved rather than copied, the bytes of a
 * large body no longer count as the event loop's isolate's external memory while the call goes on,
 * memory that would otherwise drive frequent full garbage collections beside a caller of large
 * bodies. A piece viewing part of a shared buffer (Node's
 * small-Buffer pool, a socket read that also held headers) must not be moved: its buffer is copied.
 */
function ownedBuffers(pieces: readonly Uint8Array[]): ArrayBuffer[] {
  const owned = new Set<ArrayBuffer>();
  for (const piece of pieces) {
    const buffer = piece.buffer;
    if (
      buffer instanceof ArrayBuffer &&
      piece.byteOffset === 0 &&
      piece.byteLength === buffer.byteLength &&
      piece.byteLength > 0
    )
      owned.add(buffer);
  }
  return [...owned];
}

export class JsonWorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;

  constructor(
    readonly size = availableParallelism(),
    readonly maxQueued = 64,
  ) {}

  /**
   * Runs `task` on a worker. The body is copied to the worker, so the caller's pieces stay usable;
   * with `moveBody`, the pieces that own their whole memory (as node:http's body chunks do) are moved
   * there instead and are empty afterwards (the others are still copied).
   */
  run(task: JsonTask, moveBody = false): Promise<JsonTaskResult> {
    if (this.closed) return Promise.reject(new Error('the JSON worker pool is closed'));
    if (this.queue.length >= this.maxQueued) {
      gatewayJsonWorkerTasks.inc({ kind: task.kind, outcome: 'overloaded' });
      return Promise.reject(
        new GoogleApiError(
          'UNAVAILABLE',
          `The gateway is overloaded: ${this.queue.length} large bodies already wait for a JSON worker. Retry later.`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, transfer: moveBody ? ownedBuffers(task.body) : [], resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.queue.splice(0)) waiting.reject(new Error('the JSON worker pool is closed'));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot =
        this.slots.find((s) => s.busy === undefined) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (slot === undefined) return;
      const next = this.queue.shift() as Pending;
      slot.busy = next;
      slot.worker.postMessage({ id: next.id, task: next.task }, next.transfer);
    }
  }

  private spawn(): Slot {
    // The compiled json-worker.js beside this module (tests run the sources: test/support/source-workers.ts).
    const slot: Slot = { worker: new Worker(new URL('./json-worker.js', import.meta.url)), busy: undefined };
    // Idle workers must not keep a stopping process alive; a task in flight has its server's socket doing that.
    slot.worker.unref();
    slot.worker.on('message', (reply: JsonTaskReply) => {
      const pending = slot.busy;
      if (pending === undefined || pending.id !== reply.id) return;
      slot.busy = undefined;
      gatewayJsonWorkerTasks.inc({
        kind: pending.task.kind,
        outcome: 'bytes' in reply ? 'ok' : 'refusal' in reply ? 'refused' : 'failed',
      });
      if ('bytes' in reply)
        pending.resolve({
          bytes: Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength),
          instanceCount: reply.instanceCount,
        });
      else if ('refusal' in reply)
        pending.reject(new GoogleApiError(reply.refusal.status, reply.refusal.message, reply.refusal.httpCode));
      else pending.reject(new Error(`JSON worker: ${reply.failure}`));
      this.dispatch();
    });
    const lost = (err: Error): void => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      this.slots.splice(index, 1);
      if (slot.busy !== undefined) gatewayJsonWorkerTasks.inc({ kind: slot.busy.task.kind, outcome: 'failed' });
      slot.busy?.reject(err);
      slot.busy = undefined;
      if (!this.closed) this.dispatch();
    };
    slot.worker.on('error', lost);
    slot.worker.on('exit', (code) => lost(new Error(`JSON worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}
