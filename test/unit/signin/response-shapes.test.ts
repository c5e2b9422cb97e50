import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, PASSWORD, testApp } from './fixtures.js';

/**
 * The seed's "Area A: response objects" tables, copied field for field: clients are written from
 * them, so every answer must carry exactly these fields. `tokenType` and `expiresIn` are the only
 * additions allowed (issue 15). Types: 'string', a literal, or a DTO name.
 */
type FieldType = 'string' | { literal: string } | 'AdminUserDto' | 'ShopUserDetailDto' | 'ShopListItemDto[]';
const SEED: Record<string, Record<string, FieldType>> = {
  AdminLoginResponse: { accessToken: 'string', refreshToken: 'string', user: 'AdminUserDto' },
  ShopUserLoginResponse: { accessToken: 'string', refreshToken: 'string', shopUser: 'ShopUserDetailDto' },
  'PosLoginResponse authenticated': {
    status: { literal: 'authenticated' },
    accessToken: 'string',
    refreshToken: 'string',
    shopUser: 'ShopUserDetailDto',
  },
  'PosLoginResponse select_shop': {
    status: { literal: 'select_shop' },
    sessionToken: 'string',
    shops: 'ShopListItemDto[]',
  },
  PosProfileResponse: { shopUser: 'ShopUserDetailDto', availableShops: 'ShopListItemDto[]' },
  SwitchShopResponse: { shopUser: 'ShopUserDetailDto' },
};
const ALLOWED_EXTRAS = ['tokenType', 'expiresIn'];

// The seed leaves these DTOs' fields open; DESIGN.md and dto.ts fix them.
const SHOP_LIST_ITEM = ['code', 'id', 'name'];
const SHOP_USER_DETAIL = ['displayName', 'email', 'employeeCode', 'id', 'role', 'shop'];
const ADMIN_USER = ['email', 'id', 'name', 'role'];

function expectShape(name: string, body: Record<string, unknown>): void {
  const table = SEED[name];
  if (!table) throw new Error(`no seed table ${name}`);
  const extras = Object.keys(body).filter((k) => !(k in table));
  expect(
    extras.filter((k) => !ALLOWED_EXTRAS.includes(k)),
    `${name}: fields the seed does not list`,
  ).toEqual([]);
  for (const [field, type] of Object.entries(table)) {
    const value = body[field];
    const where = `${name}.${field}`;
    if (type === 'string') expect(typeof value, where).toBe('string');
    else if (typeof type === 'object') expect(value, where).toBe(type.literal);
    else if (type === 'ShopListItemDto[]') {
      expect(Array.isArray(value), where).toBe(true);
      expect((value as unknown[]).length, where).toBeGreaterThan(0);
      for (const item of value as Record<string, unknown>[])
        expect(Object.keys(item).sort(), where).toEqual(SHOP_LIST_ITEM);
    } else {
      expect(typeof value, where).toBe('object');
      const keys = Object.keys(value as object).sort();
      expect(keys, where).toEqual(type === 'AdminUserDto' ? ADMIN_USER : SHOP_USER_DETAIL);
      if (type === 'ShopUserDetailDto')
        expect(Object.keys((value as { shop: object }).shop).sort(), `${where}.shop`).toEqual(SHOP_LIST_ITEM);
    }
  }
}

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.app.close();
});

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const r = json(body);
  const res = await t.app.inject({ method: 'POST', url, payload: r.payload, headers: { ...r.headers, ...headers } });
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json();
}

describe("responses carry exactly the seed's fields", { timeout: 30_000 }, () => {
  it('AdminLoginResponse (POST /auth/admin/login)', async () => {
    expectShape(
      'AdminLoginResponse',
      await post('/auth/admin/login', { email: 'root@example.com', password: PASSWORD }),
    );
  });

  it('ShopUserLoginResponse (POST /auth/shop/login)', async () => {
    expectShape(
      'ShopUserLoginResponse',
      await post('/auth/shop/login', { email: 'bruno@example.com', password: PASSWORD }),
    );
  });

  it('PosLoginResponse, both variants (POST /auth/pos/login, POST /auth/pos/select-shop)', async () => {
    expectShape(
      'PosLoginResponse authenticated',
      await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD }),
    );
    const select = await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD });
    expectShape('PosLoginResponse select_shop', select);
    expectShape(
      'PosLoginResponse authenticated',
      await post('/auth/pos/select-shop', { sessionToken: select.sessionToken, shopId: 'porto-1' }),
    );
  });

  it('PosProfileResponse (GET /auth/pos/me) and SwitchShopResponse (POST /auth/pos/switch-shop)', async () => {
    const select = await post('/auth/pos/login', { email: 'bruno@example.com', password: PASSWORD });
    const auth = await post('/auth/pos/select-shop', { sessionToken: select.sessionToken, shopId: 'lisbon-1' });
    const bearer = { authorization: `Bearer ${String(auth.accessToken)}` };
    const me = await t.app.inject({
      method: 'GET',
      url: '/auth/pos/me',
      headers: { ...bearer, 'x-shop-id': 'porto-1' },
    });
    expect(me.statusCode).toBe(200);
    expectShape('PosProfileResponse', me.json());
    expect(me.json().availableShops.map((s: { id: string }) => s.id)).toEqual(['lisbon-1', 'porto-1']);
    expectShape('SwitchShopResponse', await post('/auth/pos/switch-shop', { shopId: 'porto-1' }, bearer));
  });

  it('the OpenAPI components declare the same fields, all required', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const schemas = doc.components.schemas as Record<
      string,
      { properties: Record<string, unknown>; required: string[] }
    >;
    const component = {
      'PosLoginResponse authenticated': 'PosAuthenticatedResponse',
      'PosLoginResponse select_shop': 'PosSelectShopResponse',
    } as Record<string, string>;
    for (const [name, table] of Object.entries(SEED)) {
      const schema = schemas[component[name] ?? name];
      expect(schema, name).toBeDefined();
      const fields = Object.keys(table).sort();
      expect(
        Object.keys(schema!.properties)
          .filter((k) => !ALLOWED_EXTRAS.includes(k))
          .sort(),
        name,
      ).toEqual(fields);
      expect([...schema!.required].filter((k) => !ALLOWED_EXTRAS.includes(k)).sort(), name).toEqual(fields);
    }
  });
});
