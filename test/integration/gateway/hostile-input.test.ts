/**
 * The gateway under hostile input and slow or flooding clients, on a real apiserver and real sockets
 * on loopback (issue 26): deep nesting on every JSON route and in the filter is a 400 naming the limit,
 * never a 500; a number that overflows a double is a 400 naming its path; two Host headers are a 400;
 * a forced internal error is one error line with the request id the caller got back; slow headers
 * and slow bodies are answered 408 within their limits; a connection flood up to the cap leaves
 * legitimate calls served.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayPlugin, GatewayServer } from '../../../src/gateway/server.js';
import { MAX_JSON_DEPTH } from '../../../src/http/json-guard.js';
import { createTestNamespace } from '../../support/cluster.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  post,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

let env: GatewayEnv;
let gateway: GatewayServer;
let base = '';
let port = 0;
let endpointName = '';
const log = new CapturedLog();
const LIMITS = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 5_000, maxConnections: 40 };
const SERVICE = 'projects/demo-project/locations/europe-west4/namespaces/hostile/services/checkout';

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('gateway-hostile'));
  await apply(env.namespace, endpointManifest('closed', {}, []));
  await apply(
    env.namespace,
    `apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata:
  name: checkout
spec:
  name: ${SERVICE}
`,
  );
  endpointName = await waitDeployed(env.namespace, 'closed', []);
  const probe: GatewayPlugin = (app) => {
    app.get('/v1/probe/broken', async () => {
      throw new RangeError('forced route fault');
    });
  };
  ({ gateway, url: base } = await startGateway(env, log.logger, { serverLimits: LIMITS, maxCallsPerCaller: 4 }, [
    probe,
  ]));
  port = Number(new URL(base).port);
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await env?.operator.stop();
});

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** A raw HTTP/1.1 exchange on its own socket: what the server answers (or '' if it closes first), and when. */
function raw(
  request: string,
  opts: { drip?: string; dripMs?: number; timeoutMs?: number } = {},
): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let text = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const drip =
      opts.drip === undefined
        ? undefined
        : setInterval(() => socket.writable && socket.write(opts.drip as string), opts.dripMs ?? 200);
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${opts.timeoutMs ?? 15_000} ms; got ${JSON.stringify(text.slice(0, 200))}`));
    }, opts.timeoutMs ?? 15_000);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      clearTimeout(guard);
      resolve({ text, ms: Date.now() - started });
    });
  });
}

describe('bad input is a 4xx, always', () => {
  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} on :predict, :explain and :rawPredict with 400 naming the limit`, async () => {
    for (const method of ['predict', 'explain', 'rawPredict']) {
      const res = await post(`${base}/v1/${endpointName}:${method}`, `{"instances":${nested(5_000)}}`);
      expect(res.status, `${method}: ${res.text}`).toBe(400);
      expect(res.json.error.status).toBe('INVALID_ARGUMENT');
      expect(res.json.error.message).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    }
    const parameters = await post(
      `${base}/v1/${endpointName}:predict`,
      `{"instances":[1],"parameters":${'{"a":'.repeat(150)}1${'}'.repeat(150)}}`,
    );
    expect(parameters.status).toBe(400);
  });

  it('refuses a number that overflows a double with 400 naming its path, instead of forwarding null', async () => {
    const res = await post(`${base}/v1/${endpointName}:predict`, '{"instances":[{"amount":1e400}]}');
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain('instances[0].amount: the number is too large');
  });

  it('refuses deep resolve bodies and deep or long filters with 400, on :resolve and on the endpoint list', async () => {
    const deepBody = await post(`${base}/v1/${SERVICE}:resolve`, `{"endpointFilter":"port=80","x":${nested(20_000)}}`);
    expect(deepBody.status, deepBody.text).toBe(400);
    expect(deepBody.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(deepBody.json.error.message).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    const parens = await post(`${base}/v1/${SERVICE}:resolve`, {
      endpointFilter: `${'('.repeat(10_000)}port=80${')'.repeat(10_000)}`,
    });
    expect(parens.status, parens.text).toBe(400);
    expect(parens.json.error.message).toMatch(/the filter is 20007 characters long; the limit is 4096/);
    const parensShort = await post(`${base}/v1/${SERVICE}:resolve`, {
      endpointFilter: `${'('.repeat(1_000)}port=80${')'.repeat(1_000)}`,
    });
    expect(parensShort.status).toBe(400);
    expect(parensShort.json.error.message).toContain('more than 100 levels deep');
    const ands = await post(`${base}/v1/${SERVICE}:resolve`, {
      endpointFilter: Array.from({ length: 20_000 }, () => 'port=80').join(' AND '),
    });
    expect(ands.status).toBe(400);
    const list = await fetch(
      `${base}/v1/${SERVICE}/endpoints?filter=${encodeURIComponent('NOT '.repeat(500) + 'port=80')}`,
    );
    expect(list.status).toBe(400);
  });

  it('refuses two Host headers with 400, and quotes a long or control-character id bounded and escaped', async () => {
    const twoHosts = await raw(
      `POST /v1/${endpointName}:predict HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(twoHosts.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(twoHosts.text).toContain('more than one Host header');
    const longId = await post(`${base}/v1/projects/p/locations/l/endpoints/${'x'.repeat(4_000)}%00%0Aforged:predict`, {
      instances: [1],
    });
    expect(longId.status).toBe(404);
    expect(longId.json.error.message.length).toBeLessThan(400);
    // eslint-disable-next-line no-control-regex
    expect(longId.json.error.message).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe('fair gateway', () => {
  it('answers a caller over its calls in flight 429 RESOURCE_EXHAUSTED at once, before reading the body', async () => {
    // Four calls held in flight by bodies that arrive slowly (the limit of this gateway is 4 per caller).
    const held = Array.from({ length: 4 }, () =>
      raw(
        `POST /v1/${endpointName}:predict HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
        { drip: ' ', dripMs: 100 },
      ),
    );
    let heldEnded = 0;
    for (const h of held) void h.then(() => heldEnded++);
    await new Promise((r) => setTimeout(r, 300));
    const over = await post(`${base}/v1/${endpointName}:predict`, { instances: [1] });
    expect(over.status).toBe(429);
    expect(over.json.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(over.json.error.message).toContain('at most 4 calls in flight per caller');
    // Answered at once: before any of the held calls ended (they end at the request timeout).
    expect(heldEnded).toBe(0);
    // The held calls end (408 at the request timeout); then the caller is served again.
    for (const r of await Promise.all(held)) expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
    const after = await post(`${base}/v1/${endpointName}:predict`, { instances: [1] });
    expect(after.status).toBe(400);
    expect(after.json.error.status).toBe('FAILED_PRECONDITION');
  });
});

describe('every 5xx is logged once with its request id', () => {
  it('a forced internal error on the prediction path: one error line, the same id in X-Request-Id, no payload', async () => {
    const routing = gateway.context.routing as { endpoint: (name: string) => unknown };
    const original = routing.endpoint.bind(routing);
    routing.endpoint = () => {
      throw new TypeError('forced fault for the test');
    };
    try {
      const before = log.records.length;
      const res = await post(
        `${base}/v1/${endpointName}:predict`,
        { instances: [{ secret: 'payload-must-not-be-logged' }] },
        { 'x-request-id': 'probe-1234' },
      );
      expect(res.status).toBe(500);
      expect(res.headers['x-request-id']).toBe('probe-1234');
      expect(res.json.error.message).toBe('Internal error; request id probe-1234.');
      const lines = log.records.slice(before).filter((r) => r.level === 50);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        server: 'gateway',
        route: 'predict',
        requestId: 'probe-1234',
        status: 500,
        cause: 'TypeError',
        msg: 'request failed with a server error',
      });
      expect(JSON.stringify(lines[0])).not.toContain('payload-must-not-be-logged');
    } finally {
      routing.endpoint = original;
    }
  });

  it('a forced internal error on a fastify route: one error line, an id made up when the caller sent none or an insane one', async () => {
    const before = log.records.length;
    const res = await fetch(`${base}/v1/probe/broken`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(res.status).toBe(500);
    const id = res.headers.get('x-request-id') ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as { error: { message: string; status: string } };
    expect(body.error).toMatchObject({ status: 'INTERNAL', message: `Internal error; request id ${id}.` });
    const lines = log.records.slice(before).filter((r) => r.level === 50);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      server: 'gateway',
      route: '/v1/probe/broken',
      requestId: id,
      cause: 'RangeError',
    });
    expect((lines[0]?.err as { stack?: string }).stack).toContain('forced route fault');
  });
});

describe('bounded time for every request', () => {
  it('answers slow headers 408 and closes, within the headers timeout (plus the one-second check)', async () => {
    const slow = await raw('POST /v1/x HTTP/1.1\r\nHost: gw\r\n', { drip: 'X-Slow: 1\r\n', dripMs: 200 });
    expect(slow.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.ms).toBeLessThan(LIMITS.headersTimeoutMs + 2_500);
    const silent = await raw('');
    expect(silent.ms).toBeLessThan(LIMITS.headersTimeoutMs + 2_500);
  });

  it('answers a slow body 408 and closes, within the request timeout', async () => {
    const slow = await raw(
      `POST /v1/${endpointName}:predict HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{`,
      { drip: ' ', dripMs: 200 },
    );
    expect(slow.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.ms).toBeLessThan(LIMITS.requestTimeoutMs + 2_500);
  });
});

describe('a connection flood up to the cap', () => {
  it('keeps legitimate calls served: new connections close the oldest slow ones, and the flood recycles itself', async () => {
    const cap = 20;
    const flooded = await startGateway(env, log.logger, {
      serverLimits: {
        headersTimeoutMs: 60_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: cap,
      },
    });
    const floodPort = Number(new URL(flooded.url).port);
    const attackers = new Set<net.Socket>();
    let closedByServer = 0;
    let flooding = true;
    const openAttacker = (): Promise<void> =>
      new Promise((resolve) => {
        const s = net.connect(floodPort, '127.0.0.1', () => {
          s.write('POST /v1/slow HTTP/1.1\r\nHost: gw\r\nX-Slow: ');
          resolve();
        });
        s.on('error', () => undefined);
        s.on('close', () => {
          attackers.delete(s);
          closedByServer++;
          // The attacker reopens at once: the cap stays full for the whole test.
          if (flooding) void openAttacker();
        });
        attackers.add(s);
      });
    try {
      for (let i = 0; i < cap; i++) await openAttacker();
      await new Promise((r) => setTimeout(r, 300));
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        // A fresh connection per call, as a new client would come.
        const res = await fetch(`${flooded.url}/v1/${SERVICE}`, {
          headers: { connection: 'close' },
          signal: AbortSignal.timeout(10_000),
        });
        statuses.push(res.status);
        await res.arrayBuffer();
      }
      expect(statuses).toEqual(Array(10).fill(200));
      expect(closedByServer).toBeGreaterThanOrEqual(10);
      expect(attackers.size).toBeLessThanOrEqual(cap);
    } finally {
      flooding = false;
      for (const s of attackers) s.destroy();
      await flooded.gateway.close();
    }
  });
});
