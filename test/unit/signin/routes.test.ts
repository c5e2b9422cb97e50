import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, PASSWORD, testApp } from './fixtures.js';

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.app.close();
});

describe('every route', { timeout: 30_000 }, () => {
  it('with a body answers 400 problem+json naming the missing fields', async () => {
    const withBody = t.routes.filter((r) => r.body);
    expect(withBody.map((r) => r.url).sort()).toEqual(['/auth/admin/login', '/auth/logout', '/auth/pos/login', '/auth/pos/select-shop', '/auth/pos/switch-shop', '/auth/refresh', '/auth/shop/login']);
    const { accessToken } = (await t.app.inject({ method: 'POST', url: '/auth/pos/login', ...json({ email: 'ana@example.com', password: PASSWORD }) })).json();
    for (const r of withBody) {
      const res = await t.app.inject({ method: r.method, url: r.url, ...json({}), headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` } });
      expect(res.statusCode, r.url).toBe(400);
      expect(res.headers['content-type'], r.url).toMatch(/^application\/problem\+json/);
      expect(res.json().errors.length, r.url).toBeGreaterThan(0);
    }
  });

  it('behind a bearer token answers 401 with a challenge without one', async () => {
    const bearer = t.routes.filter((r) => r.bearer);
    expect(bearer.map((r) => r.url).sort()).toEqual(['/auth/pos/me', '/auth/pos/switch-shop']);
    for (const r of bearer) {
      const res = await t.app.inject({ method: r.method, url: r.url, ...(r.method === 'POST' ? json({ shopId: 'lisbon-1' }) : {}), headers: { 'x-shop-id': 'lisbon-1', ...(r.method === 'POST' ? { 'content-type': 'application/json' } : {}) } });
      expect(res.statusCode, r.url).toBe(401);
      expect(res.headers['www-authenticate'], r.url).toMatch(/^Bearer /);
    }
  });

  it('with credentials answers the same 401 for a wrong password', async () => {
    for (const url of ['/auth/admin/login', '/auth/shop/login', '/auth/pos/login']) {
      const res = await t.app.inject({ method: 'POST', url, ...json({ email: 'bruno@example.com', password: 'not it' }) });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().type).toBe('urn:endpoint-operator:signin:invalid-credentials');
    }
  });

  it('answers problem+json for every documented problem status', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const r of t.routes) {
      const responses = doc.paths[r.url][r.method.toLowerCase()].responses as Record<string, { content?: Record<string, unknown> }>;
      for (const [code, resp] of Object.entries(responses)) {
        if (Number(code) >= 400) expect(Object.keys(resp.content ?? {}), `${r.url} ${code}`).toEqual(['application/problem+json']);
      }
    }
  });
});
