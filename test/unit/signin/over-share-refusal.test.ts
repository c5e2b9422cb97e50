/**
 * Logins over their client's share of password verifications are answered 429 by the HTTP server
 * before fastify (over-share-refusal.ts): on a real loopback socket, the answer is the one fastify's
 * own refusal gives, it leaves no log line and is counted; every request that might not be refused
 * (another client, a device cookie, two Host headers, another client behind a trusted proxy) goes
 * on to fastify. The client's share is taken by the test itself, as a login being verified would.
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsRegistry } from '../../../src/base/metrics.js';
import { MemoryAttemptLedger } from '../../../src/signin/account-budget.js';
import { ManualClock } from '../../support/manual-clock.js';
import type { SignInContext } from '../../../src/signin/context.js';
import { OVER_SHARE_DETAIL } from '../../../src/signin/over-share-refusal.js';
import type { Route } from '../../../src/signin/route-table.js';
import { json, PASSWORD, testApp } from './fixtures.js';

const logLines: { reqId?: string; msg?: string }[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line.trim() !== '') logLines.push(JSON.parse(line) as { reqId?: string });
    done();
  },
});
const agents = { attacker: new Agent({ localAddress: '127.0.0.2' }), other: new Agent({ localAddress: '127.0.0.3' }) };

let app: FastifyInstance;
let context: SignInContext;
let routes: Route[];
let url = '';

beforeAll(async () => {
  ({ app, context, routes } = await testApp({
    logger: pino({ level: 'info' }, sink),
    verificationLimits: { perClient: 1 },
  }));
  url = await app.listen({ host: '127.0.0.1', port: 0 });
}, 30_000);

afterAll(async () => {
  await app.close();
  await Promise.all(Object.values(agents).map((a) => a.close()));
});

async function login(
  path: string,
  agent: Agent,
  headers: Record<string, string> = {},
  body: unknown = { email: 'nobody@example.com', password: 'guess' },
  base = url,
) {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
}

const refusedCount = async (): Promise<number> =>
  (await metricsRegistry.getSingleMetric('endpoint_operator_signin_verifications_refused_total')?.get())?.values.find(
    (v) => v.labels['reason'] === 'client',
  )?.value ?? 0;

/** The routes that verify a password, as the route table lists them (and server.ts covers them). */
const LOGIN_PATHS = (): string[] =>
  routes.filter((r) => r.info.problems.includes('invalidCredentials')).map((r) => r.info.url);

/** Whether fastify saw the request: it logs every request it handles, with the id the answer carries. */
const logged = (requestId: unknown): boolean => logLines.some((l) => l.reqId === requestId);

/** Holds `client`'s whole share (perClient 1) while `body` runs, as a login being verified would. */
async function holdingShare<T>(ctx: SignInContext, client: string, body: () => Promise<T>): Promise<T> {
  const held = ctx.verifications.admit(client);
  if (!held.admitted) throw new Error(`${client} already holds its share`);
  try {
    return await body();
  } finally {
    held.ticket.cancel();
  }
}

describe('logins over their client share: refused before fastify', { timeout: 30_000 }, () => {
  it('covers the routes that verify a password (those answering invalidCredentials), read from the route table', () => {
    expect(LOGIN_PATHS().sort()).toEqual(['/auth/admin/login', '/auth/pos/login', '/auth/shop/login']);
  });

  it('answers 429 exactly as fastify would, with no log line, counted, on every login route', async () => {
    await holdingShare(context, 'address 127.0.0.2', async () => {
      const before = await refusedCount();
      const viaFastify = await app.inject({
        method: 'POST',
        url: '/auth/pos/login',
        remoteAddress: '127.0.0.2',
        ...json({ email: 'nobody@example.com', password: 'guess' }),
      });
      expect(viaFastify.statusCode).toBe(429);
      for (const path of LOGIN_PATHS()) {
        const res = await login(path, agents.attacker, {
          'x-request-id': `flood-${path.split('/')[2] ?? ''}`,
          cookie: 'theme=dark',
        });
        expect(res.status, path).toBe(429);
        expect(res.body).toEqual({ ...(viaFastify.json() as Record<string, unknown>), instance: path });
        for (const name of [
          'content-type',
          'retry-after',
          'cache-control',
          'x-content-type-options',
          'content-security-policy',
        ])
          expect(res.headers[name], name).toBe(viaFastify.headers[name]);
        expect(res.headers['x-request-id']).toBe(`flood-${path.split('/')[2] ?? ''}`);
        expect(logged(res.headers['x-request-id']), path).toBe(false);
      }
      const withQuery = await login('/auth/pos/login?lang=pt', agents.attacker);
      expect(withQuery.status).toBe(429);
      expect(withQuery.body['instance']).toBe('/auth/pos/login');
      expect(logged(withQuery.headers['x-request-id'])).toBe(false);
      // 4 refused here, 1 by fastify's admit (the inject).
      expect((await refusedCount()) - before).toBe(5);
    });
  });

  it('lets through what it cannot refuse for sure: another client, a device cookie, two Host headers', async () => {
    await holdingShare(context, 'address 127.0.0.2', async () => {
      const other = await login('/auth/pos/login', agents.other, {}, { email: 'ana@example.com', password: PASSWORD });
      expect(other.status).toBe(200);
      // A device cookie may give the client a share of its own for the account the body names.
      const device = await login('/auth/pos/login', agents.attacker, {
        cookie: 'eo_device_AAAAAAAAAAAAAAAA=not-a-token',
      });
      expect(device.status).toBe(429);
      expect(logged(device.headers['x-request-id'])).toBe(true);
      const twoHosts = await new Promise<string>((resolve, reject) => {
        let got = '';
        const body = '{"email":"a@example.com","password":"p"}';
        const socket = net.connect(
          { host: '127.0.0.1', port: Number(new URL(url).port), localAddress: '127.0.0.2' },
          () =>
            socket.write(
              `POST /auth/pos/login HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
            ),
        );
        socket.on('data', (d) => (got += d.toString('latin1')));
        socket.on('error', reject);
        socket.on('close', () => resolve(got));
      });
      expect(twoHosts).toMatch(/^HTTP\/1\.1 400 /);
    });
    // The share given back, the same client is verified again (401: the email is unknown).
    expect((await login('/auth/pos/login', agents.attacker)).status).toBe(401);
  });

  for (const trustedProxies of [['127.0.0.0/8'], 1]) {
    it(`behind trusted proxies (${JSON.stringify(trustedProxies)}), counts the client X-Forwarded-For names, as fastify does`, async () => {
      const proxied = await testApp({
        logger: pino({ level: 'info' }, sink),
        verificationLimits: { perClient: 1 },
        trustedProxies,
      });
      const base = await proxied.app.listen({ host: '127.0.0.1', port: 0 });
      try {
        await holdingShare(proxied.context, 'address 203.0.113.7', async () => {
          const refused = await login(
            '/auth/pos/login',
            agents.attacker,
            { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' },
            undefined,
            base,
          );
          expect(refused.status).toBe(429);
          expect(logged(refused.headers['x-request-id'])).toBe(false);
          expect(
            (await login('/auth/pos/login', agents.attacker, { 'x-forwarded-for': '203.0.113.8' }, undefined, base))
              .status,
          ).toBe(401);
        });
      } finally {
        await proxied.app.close();
      }
    });
  }

  it('refuses in fastify too (a request that got past the server: a cookie, inject) before the shared attempt budget is touched', async () => {
    class CountingLedger extends MemoryAttemptLedger {
      claims = 0;
      override async claim(
        ...args: Parameters<MemoryAttemptLedger['claim']>
      ): ReturnType<MemoryAttemptLedger['claim']> {
        this.claims++;
        return super.claim(...args);
      }
    }
    const ledger = new CountingLedger(new ManualClock(Date.UTC(2026, 0, 1)));
    const t = await testApp({ attemptLedger: ledger, verificationLimits: { perClient: 1 } });
    try {
      await holdingShare(t.context, 'address 203.0.113.9', async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/auth/pos/login',
          remoteAddress: '203.0.113.9',
          ...json({ email: 'someone-new@example.com', password: 'guess' }),
        });
        expect(res.statusCode).toBe(429);
        expect(res.json()).toMatchObject({ detail: OVER_SHARE_DETAIL });
        expect(ledger.claims).toBe(0);
      });
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: '/auth/pos/login',
            remoteAddress: '203.0.113.9',
            ...json({ email: 'someone-new@example.com', password: 'guess' }),
          })
        ).statusCode,
      ).toBe(401);
      expect(ledger.claims).toBe(1);
    } finally {
      await t.app.close();
    }
  });
});
