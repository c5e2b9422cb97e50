import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../../src/base/clock.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { posResources } from '../../../src/signin/kube/resources.js';
import { SIGNING_KEY_DATA_KEY } from '../../../src/signin/kube/signing-key.js';
import { startKubernetesSignIn, type RunningKubernetesSignIn } from '../../../src/signin/kube/start.js';
import { tokenHash } from '../../../src/signin/tokens.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { createPasswordSecret, installPosCrds, posExamples, testClient } from '../signin/helpers.js';

// Issue 8, sign-in abuse, against the real sign-in API whose users and shops are resources on the real
// apiserver: brute force → 429 (and the right password refused too) until the window passes; a sessionToken,
// a forged, an alg:none or an expired token → 401; a reused refresh token revokes its family (visible in the
// SignInSession); oversized, mistyped and malformed bodies → 413, 415, 400. Every error is problem+json, and
// no password or token reaches the log. Time is the server's injected clock, moved by hand: no sleeping.
const PASSWORD = 'Till-password 4 demo!';
const ACCOUNT_LIMIT = 5;
const ADDRESS_LIMIT = 12;
const HOUR_MS = 3_600_000;

/** The server's clock: real time plus what the tests skip. */
const clock = { skippedMs: 0, now: () => Date.now() + clock.skippedMs, setTimer: realClock.setTimer };
/** Every password and token the tests send or receive: none may appear in the log. */
const secrets = new Set<string>([PASSWORD]);
let logText = '';
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    logText += chunk.toString('utf8');
    done();
  },
});

let ns: string;
let client: KubeClient;
let api: RunningKubernetesSignIn;

beforeAll(async () => {
  await installPosCrds();
  ns = await createTestNamespace('signin-abuse');
  await Promise.all(
    ['ana-password', 'bruno-password', 'rita-password'].map((name) => createPasswordSecret(ns, name, PASSWORD)),
  );
  const applied = await kubectl(['apply', '-f', '-'], { input: posExamples(ns) });
  expect(applied.code, applied.stderr).toBe(0);
  client = testClient();
  // The test client is the trusted proxy (loopback): each test speaks from its own X-Forwarded-For
  // address, so the per-address limit of one test does not throttle the next.
  api = await startKubernetesSignIn({
    client,
    namespace: ns,
    port: 0,
    logger: pino({ level: 'trace' }, sink),
    sweepIntervalMs: 0,
    clock,
    accountFailuresPerHour: ACCOUNT_LIMIT,
    ipFailuresPerHour: ADDRESS_LIMIT,
    trustedProxies: ['127.0.0.1', '::1'],
  });
});

afterAll(async () => {
  await api?.close();
  client?.close();
});

interface Res {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(
  method: string,
  path: string,
  opts: { json?: unknown; raw?: string; contentType?: string; headers?: Record<string, string>; from?: string } = {},
): Promise<Res> {
  const body = opts.raw ?? (opts.json === undefined ? undefined : JSON.stringify(opts.json));
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': opts.contentType ?? 'application/json' }),
      'x-forwarded-for': opts.from ?? '192.0.2.1',
      ...opts.headers,
    },
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

function remember<T extends Record<string, unknown>>(body: T): T {
  for (const k of ['accessToken', 'refreshToken', 'sessionToken'])
    if (typeof body[k] === 'string') secrets.add(body[k]);
  return body;
}

/** An RFC 9457 problem of this status (and type, when given). */
function expectProblem(res: Res, status: number, type?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    status,
    type: expect.stringMatching(/^urn:endpoint-operator:signin:/),
    title: expect.any(String),
    detail: expect.any(String),
  });
  if (type !== undefined) expect(res.body.type).toBe(`urn:endpoint-operator:signin:${type}`);
}

const login = (route: string, email: string, password: string, from: string) => {
  secrets.add(password);
  return call('POST', route, { json: { email, password }, from });
};
const me = (token: string, shop = 'lisbon-baixa') =>
  call('GET', '/auth/pos/me', { headers: { authorization: `Bearer ${token}`, 'x-shop-id': shop } });
const switchShop = (token: string, shopId = 'lisbon-baixa') =>
  call('POST', '/auth/pos/switch-shop', { json: { shopId }, headers: { authorization: `Bearer ${token}` } });

describe('sign-in abuse on a real apiserver', { timeout: 120_000 }, () => {
  it('brute force on each login route: 429 with Retry-After, even for the right password, until the window passes', async () => {
    const accounts = [
      { route: '/auth/admin/login', email: 'rita@example.com', from: '198.51.100.1' },
      { route: '/auth/shop/login', email: 'bruno.costa@example.com', from: '198.51.100.2' },
      { route: '/auth/pos/login', email: 'ana.silva@example.com', from: '198.51.100.3' },
    ];
    for (const a of accounts) {
      for (let i = 0; i < ACCOUNT_LIMIT; i++)
        expectProblem(await login(a.route, a.email, `guess-${i}-${a.email}`, a.from), 401, 'invalid-credentials');
      for (const password of ['one-more-guess', PASSWORD]) {
        const refused = await login(a.route, a.email, password, a.from);
        expectProblem(refused, 429, 'too-many-attempts');
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(
          Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 3600,
          `Retry-After ${String(retryAfter)}`,
        ).toBe(true);
      }
      // The count is per account, not per route, nor per address.
      expectProblem(await login('/auth/pos/login', a.email, PASSWORD, '198.51.100.99'), 429, 'too-many-attempts');
    }
    clock.skippedMs += HOUR_MS + 1000;
    for (const a of accounts) {
      const res = await login(a.route, a.email, PASSWORD, a.from);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      remember(res.body);
    }
  });

  it('guessing many accounts from one address: 429 for that address only, until the window passes', async () => {
    const from = '203.0.113.7';
    for (let i = 0; i < ADDRESS_LIMIT; i++)
      expectProblem(
        await login('/auth/pos/login', `nobody-${i}@example.com`, `guess-${i}`, from),
        401,
        'invalid-credentials',
      );
    expectProblem(await login('/auth/pos/login', 'ana.silva@example.com', PASSWORD, from), 429, 'too-many-attempts');
    expect((await login('/auth/pos/login', 'ana.silva@example.com', PASSWORD, '203.0.113.8')).status).toBe(200);
    clock.skippedMs += HOUR_MS + 1000;
    expect((await login('/auth/pos/login', 'ana.silva@example.com', PASSWORD, from)).status).toBe(200);
  });

  it('a sessionToken is refused as an access token (and as a refresh token), and stays usable for select-shop', async () => {
    const first = remember((await login('/auth/pos/login', 'bruno.costa@example.com', PASSWORD, '192.0.2.10')).body);
    expect(first.status).toBe('select_shop');
    const sessionToken = first.sessionToken as string;
    for (const res of [await me(sessionToken), await switchShop(sessionToken)]) {
      expectProblem(res, 401, 'invalid-token');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="pos", error="invalid_token"/);
    }
    expectProblem(
      await call('POST', '/auth/refresh', { json: { refreshToken: sessionToken } }),
      401,
      'invalid-refresh-token',
    );
    const chosen = await call('POST', '/auth/pos/select-shop', { json: { sessionToken, shopId: 'lisbon-baixa' } });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    const access = remember(chosen.body).accessToken as string;
    expect((await me(access)).status).toBe(200);
    expect((await switchShop(access, 'porto-ribeira')).status).toBe(200);
    // The other way round: an access token is not a sessionToken.
    expectProblem(
      await call('POST', '/auth/pos/select-shop', { json: { sessionToken: access, shopId: 'lisbon-baixa' } }),
      401,
      'invalid-session-token',
    );
  });

  it('a refresh token used twice revokes the whole family, as its SignInSession shows', async () => {
    const first = remember((await login('/auth/pos/login', 'ana.silva@example.com', PASSWORD, '192.0.2.11')).body);
    const r1 = first.refreshToken as string;
    const rotated = await call('POST', '/auth/refresh', { json: { refreshToken: r1 } });
    expect(rotated.status).toBe(200);
    const r2 = remember(rotated.body).refreshToken as string;
    const reused = await call('POST', '/auth/refresh', { json: { refreshToken: r1 } });
    expectProblem(reused, 401, 'invalid-refresh-token');
    expect(reused.body.detail).toMatch(/already used/);
    // The legitimate holder's rotated token died with the family.
    expectProblem(await call('POST', '/auth/refresh', { json: { refreshToken: r2 } }), 401, 'invalid-refresh-token');
    const session = await client.get<KubeObject>(posResources.signInSessions, ns, r1.split('.')[0]!);
    expect(session?.spec).toMatchObject({
      purpose: 'refresh',
      subject: { kind: 'ShopUser', name: 'ana-silva' },
      revoked: true,
      revokedReason: 'RefreshTokenReuse',
      tokenHash: tokenHash(r2),
    });
    expect((session?.spec as { previousTokenHashes: string[] }).previousTokenHashes).toContain(tokenHash(r1));
    expect(JSON.stringify(session)).not.toContain(r1.split('.')[1]);
    expect(JSON.stringify(session)).not.toContain(r2.split('.')[1]);
  });

  it('forged, alg:none, confused-algorithm and expired access tokens get 401; a well-signed one works', async () => {
    const secret = await client.get<KubeObject>(posResources.secrets, ns, 'endpoint-operator-signin-key');
    const realJwk = JSON.parse(
      Buffer.from((secret?.data as Record<string, string>)[SIGNING_KEY_DATA_KEY]!, 'base64').toString('utf8'),
    ) as JWK;
    const realKey = await importJWK({ ...realJwk, alg: 'EdDSA' }, 'EdDSA');
    const otherKey = (await generateKeyPair('EdDSA', { crv: 'Ed25519' })).privateKey;
    const now = Math.floor(clock.now() / 1000);
    const claims = { knd: 'ShopUser', sid: 's-forged' };
    const sign = (key: Parameters<SignJWT['sign']>[0], alg: string, iat: number, exp: number, audience = 'pos') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg, typ: 'at+jwt', kid: realJwk.kid! })
        .setIssuer('endpoint-operator-signin')
        .setAudience(audience)
        .setSubject('ana-silva')
        .setJti(`j-${Math.random()}`)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(key);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const payload = {
      ...claims,
      iss: 'endpoint-operator-signin',
      aud: 'pos',
      sub: 'ana-silva',
      jti: 'j-none',
      iat: now,
      exp: now + 600,
    };
    const forged = {
      'signed with another key': await sign(otherKey, 'EdDSA', now, now + 600),
      'alg none': `${b64({ alg: 'none', typ: 'at+jwt', kid: realJwk.kid })}.${b64(payload)}.`,
      // The classic confusion: HMAC keyed with the public key every client can fetch from the JWKS.
      'HS256 keyed with the public key': await sign(
        new TextEncoder().encode(JSON.stringify((await call('GET', '/.well-known/jwks.json')).body)),
        'HS256',
        now,
        now + 600,
      ),
      'expired, with the real key': await sign(realKey, 'EdDSA', now - 3600, now - 60),
      'for another audience, with the real key': await sign(realKey, 'EdDSA', now, now + 600, 'admin'),
    };
    for (const [what, token] of Object.entries(forged)) {
      secrets.add(token);
      for (const res of [await me(token), await switchShop(token)]) {
        expectProblem(res, 401, 'invalid-token');
        expect(res.headers.get('www-authenticate'), what).toMatch(/^Bearer /);
      }
    }
    // The same claims, well signed, are accepted: the refusals above are for the forgery, not the claims.
    const genuine = await sign(realKey, 'EdDSA', now, now + 600);
    secrets.add(genuine);
    expect((await me(genuine)).status).toBe(200);

    // A token the server issued (and already verified once) expires on the server's clock.
    const issued = remember((await login('/auth/pos/login', 'ana.silva@example.com', PASSWORD, '192.0.2.12')).body)
      .accessToken as string;
    expect((await me(issued)).status).toBe(200);
    clock.skippedMs += 16 * 60_000;
    expectProblem(await me(issued), 401, 'invalid-token');
  });

  it('oversized (413), mistyped (415) and malformed (400) bodies on every POST route, as problem+json', async () => {
    const doc = (await call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const posts = Object.entries(doc.paths)
      .filter(([, ops]) => 'post' in ops)
      .map(([path]) => path);
    expect(posts.sort()).toEqual([
      '/auth/admin/login',
      '/auth/logout',
      '/auth/pos/login',
      '/auth/pos/select-shop',
      '/auth/pos/switch-shop',
      '/auth/refresh',
      '/auth/shop/login',
    ]);
    // Protected routes authenticate before they read the body: without a valid token every one of these is 401.
    const access = remember((await login('/auth/pos/login', 'ana.silva@example.com', PASSWORD, '192.0.2.77')).body)
      .accessToken as string;
    for (const path of posts) {
      const headers = { authorization: `Bearer ${path === '/auth/pos/switch-shop' ? access : 'x'}` };
      // Just over the 16 KiB default, and 8 MiB: refused without being read to the end.
      for (const size of [16 * 1024 + 1, 8 * 1024 * 1024])
        expectProblem(
          await call('POST', path, { raw: JSON.stringify({ email: 'x'.repeat(size), password: PASSWORD }), headers }),
          413,
          'payload-too-large',
        );
      expect(await chunkedPost(path, 1024 * 1024, headers), `${path} chunked`).toMatchObject({
        status: 413,
        contentType: expect.stringMatching(/^application\/problem\+json/),
      });
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])
        expectProblem(
          await call('POST', path, { raw: 'email=a&password=b', contentType, headers }),
          415,
          'unsupported-media-type',
        );
      for (const raw of [
        '{"email": "ana.silva@example.com", "password": ',
        '{"a":1}}',
        'nul',
        '[]',
        '"x"',
        '42',
        'null',
        '{}',
        '{"email": 1, "password": ["x"], "refreshToken": {}, "shopId": 5, "sessionToken": false}',
      ]) {
        const res = await call('POST', path, { raw, headers });
        expectProblem(res, 400, 'invalid-request');
      }
      if (path === '/auth/pos/switch-shop') {
        for (const size of [16 * 1024 + 1, 8 * 1024 * 1024])
          expectProblem(
            await call('POST', path, { raw: JSON.stringify({ shopId: 'x'.repeat(size) }) }),
            401,
            'missing-token',
          );
        expectProblem(
          await call('POST', path, {
            raw: 'shopId=a',
            contentType: 'text/plain',
            headers: { authorization: 'Bearer x' },
          }),
          401,
          'invalid-token',
        );
      }
    }
  });

  it('wrote request logs, and never a password or a token', () => {
    expect(logText).toContain('refresh token reused');
    expect(logText.split('\n').length).toBeGreaterThan(100);
    const leaked = [...secrets].filter((s) => logText.includes(s));
    expect(leaked).toEqual([]);
    // Refresh tokens are `<session>.<secret>`: the session id may be logged, the secret part never.
    for (const s of secrets) if (/^s-[0-9a-f]+\.[\w-]{43}$/.test(s)) expect(logText).not.toContain(s.split('.')[1]);
  });
});

/** A body sent in chunks with no Content-Length: the limit must hold while reading, not only from the header. */
function chunkedPost(
  path: string,
  bytes: number,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${api.url}${path}`,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']) }));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    // The server answers 413 and may close while we still write: only a missing answer is a failure.
    req.on('error', (err) => setTimeout(() => reject(err), 1000));
    const chunk = Buffer.from(`{"email":"${'x'.repeat(64 * 1024 - 12)}`);
    for (let sent = 0; sent < bytes; sent += chunk.length) req.write(chunk);
    req.end('"}');
  });
}
