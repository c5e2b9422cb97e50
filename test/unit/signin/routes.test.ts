import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemTypes, type ProblemKind } from '../../../src/signin/problems.js';
import type { RouteInfo } from '../../../src/signin/route-table.js';
import { json, PASSWORD, testApp } from './fixtures.js';

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
// Lets one failure through per account, so a second wrong password is 429.
let throttled: App;
// Its shared attempt budget cannot be reached (the apiserver is down).
let cut: App;
beforeAll(async () => {
  [t, throttled, cut] = await Promise.all([
    testApp(),
    testApp({ accountFailuresPerHour: 1 }),
    testApp({ attemptLedger: { claim: () => Promise.reject(new Error('unreachable')) } }),
  ]);
  t.directory.upsertShopUser({
    metadata: { name: 'carla' },
    spec: {
      email: 'carla@example.com',
      displayName: 'Carla',
      passwordSecretRef: { name: 'passwords', key: 'ana' },
      memberships: [{ shop: 'gone-1', role: 'cashier' }],
    },
  });
});
afterAll(async () => {
  await Promise.all([t.app.close(), throttled.app.close(), cut.app.close()]);
});

async function post(
  app: App,
  url: string,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): Promise<LightMyRequestResponse> {
  const r = json(body);
  return app.app.inject({ method: 'POST', url, payload: r.payload, headers: { ...r.headers, ...headers } });
}
async function tokens(email: string, shopId?: string): Promise<{ accessToken: string; sessionToken?: string }> {
  const login = (
    await post(t, email === 'root@example.com' ? '/auth/admin/login' : '/auth/pos/login', { email, password: PASSWORD })
  ).json();
  if (shopId === undefined) return login;
  return {
    ...(await post(t, '/auth/pos/select-shop', { sessionToken: login.sessionToken, shopId })).json(),
    sessionToken: login.sessionToken,
  };
}

/** A request that should draw `kind` from `route`, made as a client would. */
async function provoke(route: RouteInfo, kind: ProblemKind): Promise<LightMyRequestResponse> {
  // A login runs argon2: only for the requests that carry its token.
  const needsToken = route.bearer || kind === 'invalidSessionToken';
  const accessToken = needsToken ? (await tokens('ana@example.com')).accessToken : '';
  const auth: Record<string, string> = route.bearer ? { authorization: `Bearer ${accessToken}` } : {};
  const shop = route.shopHeader ? { 'x-shop-id': 'lisbon-1' } : {};
  const call = (body: unknown, headers: Record<string, string | string[]> = {}, withAuth = true) =>
    route.method === 'GET'
      ? t.app.inject({ method: 'GET', url: route.url, headers: { ...(withAuth ? auth : {}), ...shop, ...headers } })
      : post(t, route.url, body, { ...(withAuth ? auth : {}), ...headers });
  const goodBody: Record<string, unknown> = { '/auth/pos/switch-shop': { shopId: 'lisbon-1' } };
  switch (kind) {
    case 'invalidRequest':
      return call({});
    case 'payloadTooLarge':
      return call({ email: 'x'.repeat(20_000), password: 'x' });
    case 'unsupportedMediaType':
      return t.app.inject({
        method: 'POST',
        url: route.url,
        payload: 'email=a&password=b',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      });
    case 'missingToken':
      return call(goodBody[route.url], {}, false);
    case 'invalidToken':
      return call(goodBody[route.url], { authorization: 'Bearer not.a.token' });
    case 'invalidAuthorizationHeader':
      return call(goodBody[route.url], { authorization: [`Bearer ${accessToken}`, 'Bearer other'] });
    case 'invalidCredentials':
      return call({
        email: route.url === '/auth/admin/login' ? 'root@example.com' : 'ana@example.com',
        password: 'not it',
      });
    case 'tooManyAttempts': {
      const email = `nobody-${Math.random()}@example.com`;
      await post(throttled, route.url, { email, password: 'wrong' });
      return post(throttled, route.url, { email, password: 'wrong' });
    }
    case 'unavailable':
      return post(cut, route.url, { email: 'ana@example.com', password: PASSWORD });
    case 'noShop':
      return call({ email: 'carla@example.com', password: PASSWORD });
    case 'forbiddenRole': {
      if (!route.bearer) return call({ email: 'ana@example.com', password: PASSWORD }); // a cashier at the back office
      const admin = await tokens('root@example.com');
      return call(goodBody[route.url], { authorization: `Bearer ${admin.accessToken}` });
    }
    case 'invalidShopHeader':
      return t.app.inject({ method: 'GET', url: route.url, headers: auth });
    case 'notAttachedToShop': {
      if (route.url === '/auth/pos/select-shop')
        return call({
          sessionToken: (await post(t, '/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json()
            .sessionToken,
          shopId: 'faro-1',
        });
      return route.method === 'GET' ? call(undefined, { 'x-shop-id': 'faro-1' }) : call({ shopId: 'faro-1' });
    }
    case 'invalidSessionToken':
      return call({ sessionToken: accessToken, shopId: 'lisbon-1' });
    case 'invalidRefreshToken':
      return call({ refreshToken: 's-0123.abc' });
    default:
      throw new Error(`no way to provoke ${kind} on ${route.url}: add one`);
  }
}

describe('every route', { timeout: 60_000 }, () => {
  it('with a body answers 400 problem+json naming the missing fields', async () => {
    const withBody = t.routes.map((r) => r.info).filter((r) => r.body);
    expect(withBody.map((r) => r.url).sort()).toEqual([
      '/auth/admin/login',
      '/auth/logout',
      '/auth/pos/login',
      '/auth/pos/select-shop',
      '/auth/pos/switch-shop',
      '/auth/refresh',
      '/auth/shop/login',
    ]);
    const { accessToken } = await tokens('ana@example.com');
    for (const r of withBody) {
      const res = await post(t, r.url, {}, { authorization: `Bearer ${accessToken}` });
      expect(res.statusCode, r.url).toBe(400);
      expect(res.headers['content-type'], r.url).toMatch(/^application\/problem\+json/);
      expect(res.json().errors.length, r.url).toBeGreaterThan(0);
    }
  });

  it('behind a bearer token answers 401 with a challenge without one, and no error code (RFC 6750 §3.1)', async () => {
    const bearer = t.routes.map((r) => r.info).filter((r) => r.bearer);
    expect(bearer.map((r) => r.url).sort()).toEqual(['/auth/pos/me', '/auth/pos/switch-shop']);
    for (const r of bearer) {
      const res = await t.app.inject({
        method: r.method,
        url: r.url,
        ...(r.method === 'POST' ? json({ shopId: 'lisbon-1' }) : {}),
        headers: { 'x-shop-id': 'lisbon-1', ...(r.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      });
      expect(res.statusCode, r.url).toBe(401);
      expect(res.headers['www-authenticate'], r.url).toBe('Bearer realm="pos"');
      const bad = await t.app.inject({ method: r.method, url: r.url, headers: { authorization: 'Bearer nope' } });
      expect(bad.headers['www-authenticate'], r.url).toMatch(/^Bearer realm="pos", error="invalid_token"/);
    }
  });

  it('with credentials answers the same 401 for a wrong password', async () => {
    for (const url of ['/auth/admin/login', '/auth/shop/login', '/auth/pos/login']) {
      const res = await post(t, url, { email: 'bruno@example.com', password: 'not it' });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().type).toBe('urn:endpoint-operator:signin:invalid-credentials');
    }
  });

  it('answers every problem its OpenAPI entry documents, as problem+json of that type and status', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    let checked = 0;
    for (const { info: r } of t.routes) {
      const documented = doc.paths[r.url][r.method.toLowerCase()].responses as Record<string, unknown>;
      for (const kind of r.problems) {
        const want = ProblemTypes[kind];
        expect(documented[String(want.status)], `${r.url} documents ${want.status}`).toBeDefined();
        const res = await provoke(r, kind);
        const where = `${r.method} ${r.url} ${kind}: ${res.body}`;
        expect(res.statusCode, where).toBe(want.status);
        expect(res.headers['content-type'], where).toMatch(/^application\/problem\+json/);
        expect(res.json(), where).toMatchObject({ type: want.type, title: want.title, status: want.status });
        if (want.status === 429) expect(Number(res.headers['retry-after']), where).toBeGreaterThan(0);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(25);
  });
});
