/**
 * The sign-in API (users and shops as resources on the real apiserver) under hostile input and an
 * unfair client, on real sockets (issue 26): deep JSON on every body route is a 400 problem naming
 * the limit; a charset other than UTF-8 is a 415; two Host headers a 400; slow headers and slow
 * bodies a 408 within their limits; a forced failure of the shared attempt budget one error line with
 * the request id; 60 concurrent unknown-email logins from one address get 429s at once while another
 * address signs in without a single 429; a connection flood at the cap leaves logins served.
 * Different clients are different source addresses on loopback (127.0.0.2, 127.0.0.3), as the
 * server sees them (no trusted proxy).
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../src/http/json-guard.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { MemoryAttemptLedger } from '../../../src/signin/account-budget.js';
import { realClock } from '../../../src/base/clock.js';
import { startKubernetesSignIn, type RunningKubernetesSignIn } from '../../../src/signin/kube/start.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { createPasswordSecret, installPosCrds, posExamples, testClient } from './helpers.js';

const PASSWORD = 'Till-password 4 demo!';
const LIMITS = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 2_000, maxConnections: 30 };
const logLines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

/** The shared budget, made to fail on demand (the forced internal error). */
class FlakyLedger extends MemoryAttemptLedger {
  failing = false;
  override async claim(...args: Parameters<MemoryAttemptLedger['claim']>): ReturnType<MemoryAttemptLedger['claim']> {
    if (this.failing) throw new TypeError('forced ledger fault');
    return super.claim(...args);
  }
}

let ns: string;
let client: KubeClient;
let api: RunningKubernetesSignIn;
let port = 0;
const ledger = new FlakyLedger(realClock);
const agents = {
  a: new Agent({ localAddress: '127.0.0.2', connections: 128 }),
  b: new Agent({ localAddress: '127.0.0.3' }),
};

beforeAll(async () => {
  await installPosCrds();
  ns = await createTestNamespace('signin-hostile');
  await Promise.all(
    ['ana-password', 'bruno-password', 'rita-password'].map((name) => createPasswordSecret(ns, name, PASSWORD)),
  );
  const applied = await kubectl(['apply', '-f', '-'], { input: posExamples(ns) });
  expect(applied.code, applied.stderr).toBe(0);
  client = testClient();
  api = await startKubernetesSignIn({
    client,
    namespace: ns,
    port: 0,
    logger: pino({ level: 'info' }, sink),
    sweepIntervalMs: 0,
    attemptLedger: ledger,
    serverLimits: LIMITS,
    verificationLimits: { concurrency: 2, perClient: 4 },
  });
  port = Number(new URL(api.url).port);
}, 120_000);

afterAll(async () => {
  await api?.close();
  client?.close();
  await Promise.all(Object.values(agents).map((a) => a.close()));
});

async function post(
  path: string,
  body: string,
  opts: { contentType?: string; agent?: Agent; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }> {
  const res = await request(`${api.url}${path}`, {
    method: 'POST',
    body,
    dispatcher: opts.agent ?? agents.b,
    headers: { 'content-type': opts.contentType ?? 'application/json', ...opts.headers },
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

/** A raw exchange on its own socket: what the server answered before closing, and when it closed. */
function raw(text: string, drip?: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let got = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    const timer = drip === undefined ? undefined : setInterval(() => socket.writable && socket.write(drip), 200);
    const guard = setTimeout(() => reject(new Error(`not closed in 15 s: ${got.slice(0, 200)}`)), 15_000);
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(guard);
      resolve({ text: got, ms: Date.now() - started });
    });
  });
}

const BODY_ROUTES = [
  '/auth/admin/login',
  '/auth/shop/login',
  '/auth/pos/login',
  '/auth/pos/select-shop',
  '/auth/refresh',
  '/auth/logout',
];

describe('bad input is a 4xx, always', () => {
  it(`answers nesting deeper than ${MAX_JSON_DEPTH} with 400 problem+json naming the limit, on every body route`, async () => {
    const deep = `{"email":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    for (const route of BODY_ROUTES) {
      const res = await post(route, deep);
      expect(res.status, `${route}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    }
    const infinite = await post('/auth/pos/select-shop', '{"sessionToken":"x","shopId":"a","n":-1e999}');
    expect(infinite.status).toBe(400);
    expect(infinite.body.detail).toContain('n: the number is too large');
  });

  it('accepts only UTF-8 JSON (415 for utf-16 or latin1) and refuses two Host headers with 400', async () => {
    for (const charset of ['utf-16', 'latin1', 'ISO-8859-1']) {
      const res = await post(
        '/auth/pos/login',
        JSON.stringify({ email: 'ana.silva@example.com', password: PASSWORD }),
        { contentType: `application/json; charset=${charset}` },
      );
      expect(res.status, charset).toBe(415);
      expect(res.body.type).toBe('urn:endpoint-operator:signin:unsupported-media-type');
    }
    const utf8 = await post('/auth/pos/login', JSON.stringify({ email: 'ana.silva@example.com', password: PASSWORD }), {
      contentType: 'application/json; charset=UTF-8',
    });
    expect(utf8.status).toBe(200);
    const twoHosts = await raw(
      'POST /auth/pos/login HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(twoHosts.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(twoHosts.text).toContain('more than one Host header');
  });
});

describe('bounded time', () => {
  it('answers slow headers and a slow body 408 problem+json, closed within the limits', async () => {
    const [headers, body] = await Promise.all([
      raw('POST /auth/pos/login HTTP/1.1\r\nHost: s\r\n', 'X-Slow: 1\r\n'),
      raw(
        'POST /auth/pos/login HTTP/1.1\r\nHost: s\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{',
        ' ',
      ),
    ]);
    expect(headers.text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(headers.text).toContain('urn:endpoint-operator:signin:request-timeout');
    expect(headers.ms).toBeLessThan(LIMITS.headersTimeoutMs + 2_500);
    expect(body.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(body.ms).toBeLessThan(LIMITS.requestTimeoutMs + 2_500);
  });
});

describe('every 5xx is logged once with its request id', () => {
  it('a failing shared attempt budget: 503, one error line naming the cause and the id the caller got', async () => {
    ledger.failing = true;
    try {
      const before = logLines.length;
      const res = await post(
        '/auth/pos/login',
        JSON.stringify({ email: 'nobody@example.com', password: 'secret-guess-123' }),
        { headers: { 'x-request-id': 'signin-probe-1' } },
      );
      expect(res.status).toBe(503);
      expect(res.headers['x-request-id']).toBe('signin-probe-1');
      const errors = logLines.slice(before).filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        server: 'signin',
        route: '/auth/pos/login',
        requestId: 'signin-probe-1',
        status: 503,
        cause: 'TypeError',
      });
      expect((errors[0]?.err as { stack: string }).stack).toContain('forced ledger fault');
      expect(JSON.stringify(errors)).not.toContain('secret-guess-123');
    } finally {
      ledger.failing = false;
    }
  });
});

describe('fair sign-in', () => {
  it('60 concurrent unknown-email logins from one address get 429 at once; another address signs in every time', async () => {
    const flood = Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post('/auth/pos/login', JSON.stringify({ email: `nobody-${i}@example.com`, password: `guess-${i}` }), {
          agent: agents.a,
        }),
      ),
    );
    const others: number[] = [];
    for (let i = 0; i < 5; i++) {
      others.push(
        (
          await post('/auth/pos/login', JSON.stringify({ email: 'ana.silva@example.com', password: PASSWORD }), {
            agent: agents.b,
          })
        ).status,
      );
    }
    const floodStatuses = (await flood).map((r) => r.status);
    expect(others).toEqual([200, 200, 200, 200, 200]);
    expect(floodStatuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(40);
    expect(floodStatuses.every((s) => s === 401 || s === 429)).toBe(true);
    const refused = (await flood).find((r) => r.status === 429);
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('a connection flood at the cap leaves logins served', async () => {
    const held = new Set<net.Socket>();
    let flooding = true;
    const open = (): void => {
      const s = net.connect(port, '127.0.0.1', () => s.write('POST /auth/pos/login HTTP/1.1\r\nHost: f\r\n'));
      s.on('error', () => undefined);
      s.on('close', () => {
        held.delete(s);
        if (flooding) open();
      });
      held.add(s);
    };
    try {
      for (let i = 0; i < LIMITS.maxConnections; i++) open();
      await new Promise((r) => setTimeout(r, 300));
      const fresh = new Agent({ localAddress: '127.0.0.4', pipelining: 0 });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push(
          (
            await post('/auth/pos/login', JSON.stringify({ email: 'ana.silva@example.com', password: PASSWORD }), {
              agent: fresh,
              headers: { connection: 'close' },
            })
          ).status,
        );
      await fresh.close();
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
    } finally {
      flooding = false;
      for (const s of held) s.destroy();
    }
  });
});
