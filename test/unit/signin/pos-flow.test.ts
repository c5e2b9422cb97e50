import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, postJson, testApp } from './fixtures.js';

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.app.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) => postJson(t.app, url, body, headers);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('POS sign-in flow', { timeout: 30_000 }, () => {
  it('a user with one shop is authenticated at once', async () => {
    const res = await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('authenticated');
    expect(body.tokenType).toBe('Bearer');
    expect(body.expiresIn).toBe(900);
    expect(body.shopUser).toEqual({
      id: 'ana',
      email: 'ana@example.com',
      displayName: 'Ana Silva',
      role: 'cashier',
      shop: { id: 'lisbon-1', name: 'Lisbon Baixa', code: 'LIS-001' },
      employeeCode: 'E-17',
    });
    expect(body.sessionToken).toBeUndefined();
  });

  it('emails match case-insensitively', async () => {
    const res = await post('/auth/pos/login', { email: ' Ana@Example.COM', password: PASSWORD });
    expect(res.statusCode).toBe(200);
  });

  it('a user with several shops selects one with a single-use sessionToken', async () => {
    const login = await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD });
    expect(login.statusCode).toBe(200);
    const body = login.json();
    expect(body.status).toBe('select_shop');
    expect(body.accessToken).toBeUndefined();
    expect(body.expiresIn).toBe(300);
    expect(body.shops).toEqual([
      { id: 'lisbon-1', name: 'Lisbon Baixa', code: 'LIS-001' },
      { id: 'porto-1', name: 'Porto Ribeira', code: 'OPO-001' },
    ]);

    const wrongShop = await post('/auth/pos/select-shop', { sessionToken: body.sessionToken, shopId: 'faro-1' });
    expect(wrongShop.statusCode).toBe(403);

    const selected = await post('/auth/pos/select-shop', { sessionToken: body.sessionToken, shopId: 'porto-1' });
    expect(selected.statusCode).toBe(200);
    const auth = selected.json();
    expect(auth.status).toBe('authenticated');
    expect(auth.shopUser.shop.id).toBe('porto-1');
    expect(auth.shopUser.displayName).toBe('Bruno C.');
    expect(auth.shopUser.role).toBe('cashier');

    const again = await post('/auth/pos/select-shop', { sessionToken: body.sessionToken, shopId: 'porto-1' });
    expect(again.statusCode).toBe(401);
    expect(again.headers['content-type']).toContain('application/problem+json');
  });

  it('two concurrent select-shop calls with one sessionToken: exactly one succeeds', async () => {
    const login = (await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const results = await Promise.all(
      [1, 2, 3].map(() => post('/auth/pos/select-shop', { sessionToken: login.sessionToken, shopId: 'lisbon-1' })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401]);
  });

  it('a sessionToken is never accepted as an access token', async () => {
    const login = (await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const me = await t.app.inject({
      method: 'GET',
      url: '/auth/pos/me',
      headers: { ...bearer(login.sessionToken), 'x-shop-id': 'lisbon-1' },
    });
    expect(me.statusCode).toBe(401);
    expect(me.headers['www-authenticate']).toMatch(/^Bearer /);
    const sw = await post('/auth/pos/switch-shop', { shopId: 'lisbon-1' }, bearer(login.sessionToken));
    expect(sw.statusCode).toBe(401);
  });

  it('an access token is never accepted as a sessionToken', async () => {
    const login = (await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).json();
    const res = await post('/auth/pos/select-shop', { sessionToken: login.accessToken, shopId: 'lisbon-1' });
    expect(res.statusCode).toBe(401);
  });

  it('/auth/pos/me answers per X-Shop-Id, 400 without or with a malformed one, 403 for a foreign shop', async () => {
    const login = (await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const auth = (await post('/auth/pos/select-shop', { sessionToken: login.sessionToken, shopId: 'lisbon-1' })).json();
    const me = (shopId?: string) =>
      t.app.inject({
        method: 'GET',
        url: '/auth/pos/me',
        headers: { ...bearer(auth.accessToken), ...(shopId === undefined ? {} : { 'x-shop-id': shopId }) },
      });

    const lisbon = await me('lisbon-1');
    expect(lisbon.statusCode).toBe(200);
    expect(lisbon.json().shopUser).toMatchObject({
      role: 'manager',
      displayName: 'Bruno Costa',
      shop: { id: 'lisbon-1' },
      employeeCode: null,
    });
    expect(lisbon.json().availableShops.map((s: { id: string }) => s.id)).toEqual(['lisbon-1', 'porto-1']);
    const porto = await me('porto-1');
    expect(porto.json().shopUser).toMatchObject({
      role: 'cashier',
      displayName: 'Bruno C.',
      shop: { id: 'porto-1', code: 'OPO-001' },
    });

    expect((await me()).statusCode).toBe(400);
    const bad = await me('Not A Shop!');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().type).toBe('urn:endpoint-operator:signin:invalid-shop-header');
    const foreign = await me('faro-1');
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ status: 403, type: 'urn:endpoint-operator:signin:not-attached-to-shop' });
  });

  it('switch-shop returns the new shop profile and no token', async () => {
    const login = (await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const auth = (await post('/auth/pos/select-shop', { sessionToken: login.sessionToken, shopId: 'lisbon-1' })).json();
    const res = await post('/auth/pos/switch-shop', { shopId: 'porto-1' }, bearer(auth.accessToken));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      shopUser: {
        id: 'bruno',
        email: 'bruno@example.com',
        displayName: 'Bruno C.',
        role: 'cashier',
        shop: { id: 'porto-1', name: 'Porto Ribeira', code: 'OPO-001' },
        employeeCode: null,
      },
    });
    expect(JSON.stringify(body)).not.toMatch(/token/i);
    const foreign = await post('/auth/pos/switch-shop', { shopId: 'faro-1' }, bearer(auth.accessToken));
    expect(foreign.statusCode).toBe(403);
    const missing = await post('/auth/pos/switch-shop', {}, bearer(auth.accessToken));
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].field).toBe('shopId');
  });

  it('a user with no existing shop gets 403 after a correct password', async () => {
    t.directory.upsertShopUser({
      metadata: { name: 'carla' },
      spec: {
        email: 'carla@example.com',
        displayName: 'Carla',
        passwordSecretRef: { name: 'passwords', key: 'ana' },
        memberships: [{ shop: 'gone-1', role: 'cashier' }],
      },
    });
    const res = await post('/auth/pos/login', { email: 'carla@example.com', password: PASSWORD });
    expect(res.statusCode).toBe(403);
    expect(res.json().type).toBe('urn:endpoint-operator:signin:no-shop');
  });
});
