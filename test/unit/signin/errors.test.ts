import argon2 from 'argon2';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PASSWORD, postJson, testApp } from './fixtures.js';

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
let logs = '';
beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs += chunk.toString();
      cb();
    },
  });
  // The logger carries no redaction of its own: the server must add it.
  t = await testApp({ logger: pino({ level: 'trace' }, sink), accountFailuresPerHour: 3, ipFailuresPerHour: 1000 });
});
afterAll(async () => {
  await t.app.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) => postJson(t.app, url, body, headers);

describe('credentials', { timeout: 30_000 }, () => {
  it('unknown email and wrong password get the same answer, and both run argon2', async () => {
    const spy = vi.spyOn(argon2, 'verify');
    const unknown = await post('/auth/pos/login', { email: 'nobody@example.com', password: PASSWORD });
    const wrong = await post('/auth/pos/login', { email: 'ana@example.com', password: 'wrong password' });
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockRestore();
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.body.replace(/"instance":"[^"]*"/, '')).toBe(wrong.body.replace(/"instance":"[^"]*"/, ''));
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('admin login returns the AdminUserDto; a shop user cannot use it', async () => {
    const ok = await post('/auth/admin/login', { email: 'root@example.com', password: PASSWORD });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().user).toEqual({ id: 'root', email: 'root@example.com', name: 'Rita Admin', role: 'superadmin' });
    expect(ok.json().accessToken).toMatch(/^ey/);
    const shopUser = await post('/auth/admin/login', { email: 'bruno@example.com', password: PASSWORD });
    expect(shopUser.statusCode).toBe(401);
    // An admin token is not a POS token, nor is a back-office token: each has its own aud.
    const { decodeJwt } = await import('jose');
    const backOffice = (await post('/auth/shop/login', { email: 'bruno@example.com', password: PASSWORD })).json();
    const pos = (await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).json();
    expect(
      [ok, { json: () => backOffice }, { json: () => pos }].map((r) => decodeJwt(r.json().accessToken).aud),
    ).toEqual(['admin', 'back-office', 'pos']);
    for (const token of [ok.json().accessToken, backOffice.accessToken]) {
      const me = await t.app.inject({
        method: 'GET',
        url: '/auth/pos/me',
        headers: { authorization: `Bearer ${token}`, 'x-shop-id': 'lisbon-1' },
      });
      expect(me.statusCode).toBe(401);
      expect(me.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    }
    // and the audience survives a refresh
    const refreshed = (await post('/auth/refresh', { refreshToken: backOffice.refreshToken })).json();
    expect(decodeJwt(refreshed.accessToken).aud).toBe('back-office');
  });

  it('shop (back-office) login answers the profile on the first managed shop and refuses cashiers', async () => {
    const manager = await post('/auth/shop/login', { email: 'bruno@example.com', password: PASSWORD });
    expect(manager.statusCode).toBe(200);
    expect(manager.json().shopUser).toEqual({
      id: 'bruno',
      email: 'bruno@example.com',
      displayName: 'Bruno Costa',
      role: 'manager',
      shop: { id: 'lisbon-1', name: 'Lisbon Baixa', code: 'LIS-001' },
      employeeCode: null,
    });
    const cashier = await post('/auth/shop/login', { email: 'ana@example.com', password: PASSWORD });
    expect(cashier.statusCode).toBe(403);
    expect(cashier.json().type).toBe('urn:endpoint-operator:signin:forbidden-role');
  });

  it('two identities with one email: neither signs in until resolved', async () => {
    t.directory.upsertAdminUser({
      metadata: { name: 'ana-admin' },
      spec: {
        email: 'ana@example.com',
        name: 'Ana',
        role: 'support',
        passwordSecretRef: { name: 'passwords', key: 'ana' },
      },
    });
    expect(t.directory.duplicateEmails().get('ana@example.com')).toEqual([
      { kind: 'ShopUser', name: 'ana' },
      { kind: 'AdminUser', name: 'ana-admin' },
    ]);
    expect((await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).statusCode).toBe(401);
    expect((await post('/auth/admin/login', { email: 'ana@example.com', password: PASSWORD })).statusCode).toBe(401);
    t.directory.removeIdentity('AdminUser', 'ana-admin');
    await t.clock.advance(3_600_000); // the failed attempts above count against the account
    expect((await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).statusCode).toBe(200);
  });

  it('throttles failures per account with 429 and Retry-After, even for the right password', async () => {
    for (let i = 0; i < 3; i++)
      expect((await post('/auth/pos/login', { email: 'root@example.com', password: `nope-${i}` })).statusCode).toBe(
        401,
      );
    const blocked = await post('/auth/pos/login', { email: 'root@example.com', password: PASSWORD });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(3000);
    expect(blocked.json().type).toBe('urn:endpoint-operator:signin:too-many-attempts');
    await t.clock.advance(3_600_000);
    expect((await post('/auth/admin/login', { email: 'root@example.com', password: PASSWORD })).statusCode).toBe(200);
  });
});

describe('request errors are problem+json', { timeout: 30_000 }, () => {
  it('400 for a missing field, naming it, without echoing the password', async () => {
    const res = await post('/auth/pos/login', { email: 'ana@example.com', password: 42 });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ field: 'password', detail: 'must be of type string' }]);
    const empty = await post('/auth/pos/login', { email: 'ana@example.com', password: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).not.toContain('hunter2');
  });

  it('400 for malformed JSON, 415 for another media type, 413 over the body limit, 404 for an unknown route', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/auth/pos/login',
      payload: '{"email":"a@b.c","password":"hunter2-secret" x}',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).not.toContain('hunter2');
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    const text = await t.app.inject({
      method: 'POST',
      url: '/auth/pos/login',
      payload: 'email=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(text.statusCode).toBe(415);
    const big = await post('/auth/pos/login', { email: 'ana@example.com', password: 'x'.repeat(20_000) });
    expect(big.statusCode).toBe(413);
    expect(big.json().type).toBe('urn:endpoint-operator:signin:payload-too-large');
    const nf = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(nf.statusCode).toBe(404);
    expect(nf.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('401 with a Bearer challenge without a token or with a malformed header', async () => {
    for (const headers of [{}, { authorization: 'Basic YTpi' }, { authorization: 'Bearer not.a.jwt' }]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/auth/pos/me',
        headers: { ...headers, 'x-shop-id': 'lisbon-1' },
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="pos"/);
    }
  });
});

describe('documents', { timeout: 30_000 }, () => {
  it('/.well-known/jwks.json has the Ed25519 public key only, and it verifies the access tokens', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    const [key] = res.json().keys;
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(key.d).toBeUndefined();
    const { createLocalJWKSet, jwtVerify } = await import('jose');
    const login = (await post('/auth/admin/login', { email: 'root@example.com', password: PASSWORD })).json();
    const { protectedHeader, payload } = await jwtVerify(login.accessToken, createLocalJWKSet(res.json()), {
      currentDate: new Date(t.clock.now()),
    });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload.sub).toBe('root');
  });

  it('/openapi.json documents every route with its problem responses', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.0.3');
    for (const { info: r } of t.routes) expect(doc.paths[r.url][r.method.toLowerCase()]).toBeDefined();
    expect(Object.keys(doc.paths['/auth/pos/me'].get.responses).sort()).toEqual(['200', '400', '401', '403']);
    expect(doc.paths['/auth/pos/login'].post.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PosLoginResponse',
    });
    expect(doc.components.schemas.PosLoginResponse.oneOf).toHaveLength(2);
    expect(doc.components.schemas.ShopUserDetailDto.required).toEqual([
      'id',
      'email',
      'displayName',
      'role',
      'shop',
      'employeeCode',
    ]);
    // every $ref resolves
    for (const ref of JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []) {
      const id = ref.slice('"$ref":"#/components/schemas/'.length, -1);
      expect(doc.components.schemas[id], ref).toBeDefined();
    }
  });
});

describe('logging', { timeout: 30_000 }, () => {
  it('never writes passwords or tokens', async () => {
    const login = (await post('/auth/admin/login', { email: 'root@example.com', password: PASSWORD })).json();
    await t.app.inject({
      method: 'GET',
      url: '/auth/pos/me',
      headers: { authorization: `Bearer ${login.accessToken}`, 'x-shop-id': 'x' },
    });
    await post('/auth/refresh', { refreshToken: login.refreshToken });
    t.app.log.info(
      { req: { headers: { authorization: `Bearer ${login.accessToken}` } }, body: { password: PASSWORD } },
      'explicit',
    );
    expect(logs).toContain('explicit');
    expect(logs).toContain('[REDACTED]');
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain(login.accessToken);
    expect(logs).not.toContain(login.refreshToken);
  });
});
