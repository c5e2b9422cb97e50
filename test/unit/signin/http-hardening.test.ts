import { connect } from 'node:net';
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

describe('the sign-in API over HTTP', { timeout: 30_000 }, () => {
  it('authenticates before it reads the body: a bad, huge or non-JSON body without a valid token is 401', async () => {
    const noToken: Record<string, string>[] = [{}, { authorization: 'Bearer forged' }];
    for (const headers of noToken) {
      expect((await post('/auth/pos/switch-shop', { shopId: 42 }, headers)).statusCode).toBe(401);
      expect((await post('/auth/pos/switch-shop', { shopId: 'x'.repeat(40_000) }, headers)).statusCode).toBe(401);
      const form = await t.app.inject({
        method: 'POST',
        url: '/auth/pos/switch-shop',
        payload: 'shopId=lisbon-1',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
      expect(form.statusCode).toBe(401);
    }
  });

  it('refuses duplicate Authorization headers with 400 invalid_request', async () => {
    const { accessToken } = (await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).json();
    const res = await t.app.inject({
      method: 'GET',
      url: '/auth/pos/me',
      headers: {
        'x-shop-id': 'lisbon-1',
        authorization: [`Bearer ${accessToken}`, `Bearer ${accessToken}`] as unknown as string,
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_request"/);
  });

  it('marks token answers and profiles no-store, and every answer nosniff with a deny-all CSP', async () => {
    const login = await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD });
    const me = await t.app.inject({
      method: 'GET',
      url: '/auth/pos/me',
      headers: { authorization: `Bearer ${login.json().accessToken}`, 'x-shop-id': 'lisbon-1' },
    });
    const refresh = await post('/auth/refresh', { refreshToken: login.json().refreshToken });
    const problem = await post('/auth/pos/login', { email: 'ana@example.com', password: 'wrong' });
    for (const res of [login, me, refresh, problem]) {
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    }
    const jwks = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(jwks.headers['cache-control']).toBe('public, max-age=300');
    expect(jwks.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a wrong method with 405 and Allow, an unknown path with 404', async () => {
    const wrong = await t.app.inject({ method: 'GET', url: '/auth/pos/login' });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(wrong.json().type).toBe('urn:endpoint-operator:signin:method-not-allowed');
    const me = await t.app.inject({ method: 'DELETE', url: '/auth/pos/me' });
    expect(me.statusCode).toBe(405);
    expect(me.headers.allow).toBe('GET, HEAD');
    const none = await t.app.inject({ method: 'GET', url: '/auth/nothing' });
    expect(none.statusCode).toBe(404);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers headers over 16 KiB with 431 problem+json', async () => {
    const app = await testApp();
    try {
      const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
      const port = Number(new URL(address).port);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(`GET /auth/pos/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
        );
        let data = '';
        socket.on('data', (d) => (data += d.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(answer).toMatch(/Content-Type: application\/problem\+json/i);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
        status: 431,
        type: 'urn:endpoint-operator:signin:headers-too-large',
      });
    } finally {
      await app.app.close();
    }
  });

  it('refuses an access token at once after logout and after refresh-token reuse', async () => {
    const me = (token: string) =>
      t.app.inject({
        method: 'GET',
        url: '/auth/pos/me',
        headers: { authorization: `Bearer ${token}`, 'x-shop-id': 'lisbon-1' },
      });
    const a = (await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).json();
    expect((await me(a.accessToken)).statusCode).toBe(200);
    expect((await post('/auth/logout', { refreshToken: a.refreshToken })).statusCode).toBe(204);
    const after = await me(a.accessToken);
    expect(after.statusCode).toBe(401);
    expect(after.json().detail).toMatch(/session of this access token has ended/);

    const b = (await post('/auth/pos/login', { email: 'ana@example.com', password: PASSWORD })).json();
    const rotated = (await post('/auth/refresh', { refreshToken: b.refreshToken })).json();
    expect((await me(rotated.accessToken)).statusCode).toBe(200);
    expect((await post('/auth/refresh', { refreshToken: b.refreshToken })).statusCode).toBe(401); // reuse
    expect((await me(rotated.accessToken)).statusCode).toBe(401);
    expect((await me(b.accessToken)).statusCode).toBe(401);
  });
});
