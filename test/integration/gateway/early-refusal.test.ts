/**
 * A prediction call refused before its body is read (here: its caller is over its calls in flight)
 * costs the gateway no body (src/http/unread-body.ts, B6-fair): a large body is not read, the 429 says
 * `Connection: close` and reaches the client before the connection closes; a client sending
 * `Expect: 100-continue` (curl) is refused before it sends its body, and is told to send it once admitted.
 * Real sockets on loopback, undici and Debian's curl as the clients, a real apiserver behind the gateway.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace } from '../../support/cluster.js';
import { ensureCurl } from '../../support/debian-tools.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

let env: GatewayEnv;
let gateway: GatewayServer;
let base = '';
let port = 0;
let url = '';
let curl = '';
let dir = '';
const BIG = 1_400_000;

beforeAll(async () => {
  curl = await ensureCurl();
  dir = await mkdtemp(join(tmpdir(), 'eo-early-refusal-'));
  env = await setUpNamespace(await createTestNamespace('gateway-early'));
  await apply(env.namespace, endpointManifest('closed', {}, []));
  const name = await waitDeployed(env.namespace, 'closed', []);
  // One call in flight per caller: one held call makes every other call from 127.0.0.1 a refusal.
  ({ gateway, url: base } = await startGateway(env, new CapturedLog().logger, {
    maxCallsPerCaller: 1,
    bodyLimitBytes: 1_500_000,
    serverLimits: {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 100,
    },
  }));
  port = Number(new URL(base).port);
  url = `${base}/v1/${name}:predict`;
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await env?.operator.stop();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

/** A call held in flight by a body that never finishes arriving; `release()` ends it (the client goes away). */
async function holdOneCall(): Promise<{ release: () => void }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((r) => socket.once('connect', r));
  socket.write(
    `POST ${new URL(url).pathname} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
  );
  await new Promise((r) => setTimeout(r, 300));
  return { release: () => socket.destroy() };
}

/** Headers and the first `sent` bytes of a `length`-byte body on a raw socket: the answer, and whether and when the gateway closed its side. */
function partialBody(length: number, sent: number): Promise<{ text: string; halfClosedMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let text = '';
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      socket.write(
        `POST ${new URL(url).pathname} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${' '.repeat(sent)}`,
      );
    });
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway did not close its side within 20 s; got ${JSON.stringify(text.slice(0, 200))}`));
    }, 20_000);
    socket.on('error', () => undefined);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('end', () => {
      clearTimeout(guard);
      resolve({ text, halfClosedMs: Date.now() - started });
      socket.destroy();
    });
  });
}

const run = promisify(execFile);

describe('a call refused before its body is read', () => {
  it('answers 429 with Connection: close to an undici client sending 1.4 MB, and closes without reading the rest', async () => {
    const held = await holdOneCall();
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.alloc(BIG, 0x20),
      });
      const answer = (await res.body.json()) as { error: { code: number; status: string; message: string } };
      expect(res.statusCode).toBe(429);
      expect(res.headers['connection']).toBe('close');
      expect(answer.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
      // 64 KiB of a 1.4 MB body sent: the gateway answers and closes its side without waiting for the rest.
      const partial = await partialBody(BIG, 65_536);
      expect(partial.text).toMatch(/^HTTP\/1\.1 429 /);
      expect(partial.text.toLowerCase()).toContain('connection: close');
      expect(partial.halfClosedMs).toBeLessThan(10_000);
    } finally {
      held.release();
    }
  });

  it("answers a refused 1.4 MB call once the caller's call in flight ends, so a client retrying at once does not loop on refusals", async () => {
    const held = await holdOneCall();
    const started = performance.now();
    const answered = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(BIG, 0x20),
    }).then(async (res) => {
      await res.body.dump();
      return { status: res.statusCode, connection: res.headers['connection'], ms: performance.now() - started };
    });
    // Well inside the 1 s hold (fairness.ts REFUSAL_HOLD_MS), which starts only once the call reached the gateway.
    await new Promise((r) => setTimeout(r, 400));
    const releasedMs = performance.now() - started;
    held.release();
    const refused = await answered;
    expect(refused.status).toBe(429);
    expect(refused.connection).toBe('close');
    expect(refused.ms).toBeGreaterThanOrEqual(releasedMs);
  });

  it('keeps the connection for a small refused body, which is cheaper to read than a new connection', async () => {
    const held = await holdOneCall();
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"instances":[1]}',
      });
      await res.body.dump();
      expect(res.statusCode).toBe(429);
      expect(res.headers['connection']).not.toBe('close');
    } finally {
      held.release();
    }
  });

  it('refuses curl sending Expect: 100-continue before it sends its body, and lets it send once admitted', async () => {
    const file = join(dir, 'big.json');
    const body = JSON.stringify({
      instances: Array.from({ length: 40_000 }, (_, i) => ({ amount: i, hourOfDay: 23 })),
    });
    await writeFile(file, body);
    const curlPost = async (): Promise<{ body: string; code: string; uploaded: number }> => {
      const { stdout } = await run(
        curl,
        [
          '-sS',
          '-H',
          'Expect: 100-continue',
          '-H',
          'Content-Type: application/json',
          '--data-binary',
          `@${file}`,
          '-w',
          '\n%{http_code} %{size_upload}',
          url,
        ],
        { maxBuffer: 1 << 20 },
      );
      const lines = stdout.trimEnd().split('\n');
      const [code = '', uploaded = ''] = (lines.pop() ?? '').split(' ');
      return { body: lines.join('\n'), code, uploaded: Number(uploaded) };
    };
    const held = await holdOneCall();
    let refused: Awaited<ReturnType<typeof curlPost>>;
    try {
      refused = await curlPost();
    } finally {
      held.release();
    }
    expect(refused.code).toBe('429');
    expect(JSON.parse(refused.body).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(refused.uploaded).toBe(0);
    // Admitted: 100 Continue, the whole body sent, and the endpoint's own answer (it accepts no traffic).
    await new Promise((r) => setTimeout(r, 300));
    const admitted = await curlPost();
    expect(admitted.code).toBe('400');
    expect(JSON.parse(admitted.body).error.status).toBe('FAILED_PRECONDITION');
    expect(admitted.uploaded).toBe(Buffer.byteLength(body));
  });
});
