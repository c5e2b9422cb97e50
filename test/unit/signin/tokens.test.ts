import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, PASSWORD, postJson, testApp } from './fixtures.js';

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.app.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) => postJson(t.app, url, body, headers);
const me = (accessToken: string, shopId = 'lisbon-1') =>
  t.app.inject({
    method: 'GET',
    url: '/auth/pos/me',
    headers: { authorization: `Bearer ${accessToken}`, 'x-shop-id': shopId },
  });
const loginAna = async () => (await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).json();

describe('refresh tokens', { timeout: 30_000 }, () => {
  it('rotate on every use and the old one then revokes the family', async () => {
    const first = await loginAna();
    const r1 = await post('/auth/refresh', { refreshToken: first.refreshToken });
    expect(r1.statusCode).toBe(200);
    const second = r1.json();
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.tokenType).toBe('Bearer');
    expect((await me(second.accessToken)).statusCode).toBe(200);

    const replay = await post('/auth/refresh', { refreshToken: first.refreshToken });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().detail).toMatch(/already used/);
    // The legitimate holder's newer token dies with the family.
    const afterReuse = await post('/auth/refresh', { refreshToken: second.refreshToken });
    expect(afterReuse.statusCode).toBe(401);
  });

  it('two concurrent refreshes of one token: one wins, the other is reuse, and the family is revoked', async () => {
    const first = await loginAna();
    const [a, b] = await Promise.all([
      post('/auth/refresh', { refreshToken: first.refreshToken }),
      post('/auth/refresh', { refreshToken: first.refreshToken }),
    ]);
    const codes = [a.statusCode, b.statusCode].sort();
    expect(codes).toEqual([200, 401]);
    const winner = (a.statusCode === 200 ? a : b).json();
    expect((await post('/auth/refresh', { refreshToken: winner.refreshToken })).statusCode).toBe(401);
  });

  it('refuse garbage, unknown and access tokens', async () => {
    const first = await loginAna();
    for (const refreshToken of [
      'x',
      's-000000000000000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      first.accessToken,
    ]) {
      const res = await post('/auth/refresh', { refreshToken });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect((await post('/auth/refresh', {})).statusCode).toBe(400);
  });

  it('are stored only as hashes', async () => {
    const first = await loginAna();
    const id = first.refreshToken.split('.')[0];
    const stored = await t.sessions.get(id);
    expect(stored?.tokenHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(stored)).not.toContain(first.refreshToken.split('.')[1]);
  });

  it('logout revokes the family and always answers 204', async () => {
    const first = await loginAna();
    const out = await post('/auth/logout', { refreshToken: first.refreshToken });
    expect(out.statusCode).toBe(204);
    expect((await post('/auth/refresh', { refreshToken: first.refreshToken })).statusCode).toBe(401);
    expect((await post('/auth/logout', { refreshToken: 'nonsense' })).statusCode).toBe(204);
  });

  it('expire: a refresh token after its TTL and an access token after 15 minutes', async () => {
    const first = await loginAna();
    expect((await me(first.accessToken)).statusCode).toBe(200); // now in the verified-token cache
    await t.clock.advance(15 * 60 * 1000 - 2000);
    expect((await me(first.accessToken)).statusCode).toBe(200);
    await t.clock.advance(3000);
    const expired = await me(first.accessToken);
    expect(expired.statusCode).toBe(401);
    expect(expired.headers['www-authenticate']).toContain('error="invalid_token"');
    const refreshed = await post('/auth/refresh', { refreshToken: first.refreshToken });
    expect(refreshed.statusCode).toBe(200);
    await t.clock.advance(31 * 24 * 3600 * 1000);
    expect((await post('/auth/refresh', { refreshToken: refreshed.json().refreshToken })).statusCode).toBe(401);
  });
});

describe('changes to users take effect at once', { timeout: 30_000 }, () => {
  it('a disabled user fails the next /me, switch and refresh; re-enabled works again', async () => {
    const first = (await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const auth = (await post('/auth/pos/select-shop', { sessionToken: first.sessionToken, shopId: 'lisbon-1' })).json();
    expect((await me(auth.accessToken)).statusCode).toBe(200);
    const spec = {
      email: 'bruno@example.com',
      displayName: 'Bruno Costa',
      passwordSecretRef: { name: 'passwords-2', key: 'bruno' },
      memberships: [
        { shop: 'lisbon-1', role: 'manager' },
        { shop: 'porto-1', role: 'cashier' },
      ],
    };
    t.directory.upsertShopUser({ metadata: { name: 'bruno' }, spec: { ...spec, status: 'disabled' } });
    expect((await me(auth.accessToken)).statusCode).toBe(401);
    expect(
      (await post('/auth/pos/switch-shop', { shopId: 'porto-1' }, { authorization: `Bearer ${auth.accessToken}` }))
        .statusCode,
    ).toBe(401);
    expect((await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).statusCode).toBe(401);
    expect((await post('/auth/refresh', { refreshToken: auth.refreshToken })).statusCode).toBe(401);

    t.directory.upsertShopUser({ metadata: { name: 'bruno' }, spec });
    // the refresh family was revoked when the disabled user tried it: its access token stays refused
    expect((await me(auth.accessToken)).statusCode).toBe(401);
    const again = (await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const fresh = (
      await post('/auth/pos/select-shop', { sessionToken: again.sessionToken, shopId: 'lisbon-1' })
    ).json();
    expect((await me(fresh.accessToken)).statusCode).toBe(200);
    // a removed membership: 403 for that shop at once
    t.directory.upsertShopUser({
      metadata: { name: 'bruno' },
      spec: { ...spec, memberships: [{ shop: 'lisbon-1', role: 'manager' }] },
    });
    expect((await me(fresh.accessToken, 'porto-1')).statusCode).toBe(403);
    expect(
      (await post('/auth/pos/switch-shop', { shopId: 'porto-1' }, { authorization: `Bearer ${fresh.accessToken}` }))
        .statusCode,
    ).toBe(403);
    expect((await me(fresh.accessToken, 'lisbon-1')).statusCode).toBe(200);
  });

  it('a deleted user fails the next request', async () => {
    const first = await loginAna();
    t.directory.removeIdentity('ShopUser', 'ana');
    expect((await me(first.accessToken)).statusCode).toBe(401);
    expect((await post('/auth/refresh', { refreshToken: first.refreshToken })).statusCode).toBe(401);
  });
});

describe('refresh families per user', { timeout: 30_000 }, () => {
  it('are capped: the login past the cap revokes the oldest family, and its access token with it', async () => {
    const capped = await (await import('./fixtures.js')).testApp({ maxSessionsPerUser: 3 });
    try {
      const login = async () =>
        (
          await capped.app.inject({
            method: 'POST',
            url: '/auth/pos/login',
            ...json({ email: 'ana@example.com', password: PASSWORD }),
          })
        ).json();
      const meOn = (token: string) =>
        capped.app.inject({
          method: 'GET',
          url: '/auth/pos/me',
          headers: { authorization: `Bearer ${token}`, 'x-shop-id': 'lisbon-1' },
        });
      const logins = [];
      for (let i = 0; i < 5; i++) {
        logins.push(await login());
        await capped.clock.advance(1000);
      }
      expect(capped.sessions.activeFamilies({ kind: 'ShopUser', name: 'ana' }, capped.clock.now())).toHaveLength(3);
      expect(await Promise.all(logins.map(async (l) => (await meOn(l.accessToken)).statusCode))).toEqual([
        401, 401, 200, 200, 200,
      ]);
      const oldest = logins[0].refreshToken.split('.')[0];
      expect((await capped.sessions.get(oldest))?.revokedReason).toBe('SessionLimit');
    } finally {
      await capped.app.close();
    }
  });
});
