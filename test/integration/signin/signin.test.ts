import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { silentLogger } from '../../../src/base/logger.js';
import { coreResources } from '../../../src/api/common/kube-object.js';
import { ATTEMPTS_LABEL, attemptLeaseName } from '../../../src/signin/kube/attempt-ledger.js';
import { posResources } from '../../../src/signin/kube/resources.js';
import { startKubernetesSignIn, type RunningKubernetesSignIn } from '../../../src/signin/kube/start.js';
import { installCrds } from '../../../src/operator/crds.js';
import { startOperator, type RunningOperator } from '../../../src/operator/start.js';
import { runCli } from '../../support/cli.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { createPasswordSecret, eventually, installPosCrds, posExamples, testClient } from './helpers.js';

const PASSWORD = 'Till-password 4 demo!';
// The test client plays the ingress, so X-Forwarded-For names the client.
const LOOPBACK = ['127.0.0.1', '::1'];
let ns: string;
let client: KubeClient;
let a: RunningKubernetesSignIn;
let b: RunningKubernetesSignIn;
/** The operator, as `endpoint-operator run --signin` starts it: it writes the sign-in kinds' Ready from `a`'s cache. */
let operator: RunningOperator;

async function call(
  server: RunningKubernetesSignIn,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  };
}
const login = (s: RunningKubernetesSignIn, email: string, password = PASSWORD) =>
  call(s, 'POST', '/auth/pos/login', { email, password });
const me = (s: RunningKubernetesSignIn, token: string, shop: string) =>
  call(s, 'GET', '/auth/pos/me', undefined, { authorization: `Bearer ${token}`, 'x-shop-id': shop });

async function readyOf(
  plural: string,
  name: string,
): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  const r = await kubectl(['get', plural, name, '-n', ns, '-o', 'json']);
  if (r.code !== 0) return undefined;
  const obj = JSON.parse(r.stdout) as {
    status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
  };
  return obj.status?.conditions?.find((c) => c.type === 'Ready');
}

beforeAll(async () => {
  await installPosCrds();
  const crdClient = testClient();
  await installCrds(crdClient);
  crdClient.close();
  ns = await createTestNamespace('signin');
  for (const name of ['ana-password', 'bruno-password', 'rita-password'])
    await createPasswordSecret(ns, name, PASSWORD);
  const applied = await kubectl(['apply', '-f', '-'], { input: posExamples(ns) });
  expect(applied.code, applied.stderr).toBe(0);
  client = testClient();
  // Two replicas on one namespace: they must share the signing key and the sessions.
  [a, b] = await Promise.all([
    startKubernetesSignIn({
      client,
      namespace: ns,
      port: 0,
      logger: silentLogger,
      sweepIntervalMs: 0,
      trustedProxies: LOOPBACK,
    }),
    startKubernetesSignIn({
      client,
      namespace: ns,
      port: 0,
      logger: silentLogger,
      sweepIntervalMs: 0,
      trustedProxies: LOOPBACK,
    }),
  ]);
  operator = await startOperator({
    client,
    settings: {
      project: '{namespace}',
      location: 'europe-west4',
      namespaces: [ns],
      workers: 2,
      leaderElection: { enabled: true, namespace: ns, leaseName: 'endpoint-operator' },
    },
    log: silentLogger,
    signIn: a.directory,
  });
});

afterAll(async () => {
  await operator?.stop();
  await Promise.all([a?.close(), b?.close()]);
  client?.close();
});

describe('sign-in on a real apiserver', () => {
  it('users declared with kubectl apply sign in: one shop → authenticated', async () => {
    const res = await login(a, 'ana.silva@example.com');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: 'authenticated',
      shopUser: {
        id: 'ana-silva',
        role: 'cashier',
        shop: { id: 'lisbon-baixa', code: 'LIS-001' },
        employeeCode: 'E-0017',
      },
    });
    expect((await me(a, res.body!.accessToken as string, 'lisbon-baixa')).status).toBe(200);
    expect((await me(a, res.body!.accessToken as string, 'porto-ribeira')).status).toBe(403);
  });

  it('several shops → select_shop → select-shop → authenticated, the selection stored as a SignInSession and spent once', async () => {
    const first = await login(a, 'bruno.costa@example.com');
    expect(first.body).toMatchObject({
      status: 'select_shop',
      shops: [{ id: 'lisbon-baixa' }, { id: 'porto-ribeira' }],
    });
    const sessions = await client.list<KubeObject>(posResources.signInSessions, ns);
    expect(sessions.items.some((s) => (s.spec as { purpose: string }).purpose === 'shop-selection')).toBe(true);
    expect(JSON.stringify(sessions.items)).not.toContain(first.body!.sessionToken as string);
    // accepted by the other replica, once
    const chosen = await call(b, 'POST', '/auth/pos/select-shop', {
      sessionToken: first.body!.sessionToken,
      shopId: 'porto-ribeira',
    });
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({
      status: 'authenticated',
      shopUser: { displayName: 'Bruno C.', role: 'cashier', shop: { id: 'porto-ribeira' } },
    });
    expect(
      (
        await call(a, 'POST', '/auth/pos/select-shop', {
          sessionToken: first.body!.sessionToken,
          shopId: 'porto-ribeira',
        })
      ).status,
    ).toBe(401);
    // a sessionToken is not an access token
    expect((await me(a, first.body!.sessionToken as string, 'porto-ribeira')).status).toBe(401);
  });

  it('replicas share one signing key from a Secret', async () => {
    const [ja, jb] = await Promise.all([
      call(a, 'GET', '/.well-known/jwks.json'),
      call(b, 'GET', '/.well-known/jwks.json'),
    ]);
    expect(ja.body).toEqual(jb.body);
    const secret = await client.get<KubeObject>(posResources.secrets, ns, 'endpoint-operator-signin-key');
    expect(secret?.data).toBeDefined();
    const token = (await login(a, 'ana.silva@example.com')).body!.accessToken as string;
    expect((await me(b, token, 'lisbon-baixa')).status).toBe(200);
  });

  it('refresh rotates through SignInSession compare-and-swap; concurrent use on two replicas revokes the family', async () => {
    const first = (await login(a, 'ana.silva@example.com')).body!;
    const second = await call(b, 'POST', '/auth/refresh', { refreshToken: first.refreshToken });
    expect(second.status).toBe(200);
    const t2 = second.body!.refreshToken as string;
    const [x, y] = await Promise.all([
      call(a, 'POST', '/auth/refresh', { refreshToken: t2 }),
      call(b, 'POST', '/auth/refresh', { refreshToken: t2 }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 401]);
    const winner = (x.status === 200 ? x : y).body!.refreshToken as string;
    expect((await call(a, 'POST', '/auth/refresh', { refreshToken: winner })).status).toBe(401);
    const id = (first.refreshToken as string).split('.')[0]!;
    const stored = await client.get<KubeObject>(posResources.signInSessions, ns, id);
    expect(stored?.spec).toMatchObject({ revoked: true, revokedReason: 'RefreshTokenReuse' });
    expect(JSON.stringify(stored)).not.toContain((first.refreshToken as string).split('.')[1]);
  });

  it('logout revokes the family', async () => {
    const first = (await login(b, 'ana.silva@example.com')).body!;
    expect((await call(a, 'POST', '/auth/logout', { refreshToken: first.refreshToken })).status).toBe(204);
    expect((await call(b, 'POST', '/auth/refresh', { refreshToken: first.refreshToken })).status).toBe(401);
  });

  it('reports Ready on users and shops', async () => {
    await eventually(
      'ShopUser ana-silva Ready=True',
      async () => (await readyOf('shopusers', 'ana-silva'))?.status === 'True',
    );
    await eventually(
      'Shop porto-ribeira Ready=True',
      async () => (await readyOf('shops', 'porto-ribeira'))?.status === 'True',
    );
    await eventually(
      'AdminUser rita-admin Ready=True',
      async () => (await readyOf('adminusers', 'rita-admin'))?.status === 'True',
    );
    const admin = await call(a, 'POST', '/auth/admin/login', { email: 'rita@example.com', password: PASSWORD });
    expect(admin.status).toBe(200);
    expect(admin.body!.user).toEqual({
      id: 'rita-admin',
      email: 'rita@example.com',
      name: 'Rita Marques',
      role: 'superadmin',
    });
  });

  it('a duplicate email blocks both identities and is reported in their status until resolved', async () => {
    const dup = `apiVersion: pos.endpoint-operator.dev/v1
kind: AdminUser
metadata: { name: ana-admin, namespace: ${ns} }
spec: { email: ana.silva@example.com, name: Ana Silva, role: support, passwordSecretRef: { name: ana-password, key: password } }
`;
    expect((await kubectl(['apply', '-f', '-'], { input: dup })).code).toBe(0);
    const cond = await eventually('ShopUser ana-silva DuplicateEmail', async () => {
      const c = await readyOf('shopusers', 'ana-silva');
      return c?.reason === 'DuplicateEmail' ? c : undefined;
    });
    expect(cond.status).toBe('False');
    expect(cond.message).toContain('AdminUser/ana-admin');
    await eventually(
      'AdminUser ana-admin DuplicateEmail',
      async () => (await readyOf('adminusers', 'ana-admin'))?.reason === 'DuplicateEmail',
    );
    // a transition is also an Event, written by the sign-in controller of the operator holding its one Lease
    await eventually('a DuplicateEmail Event on ana-silva', async () => {
      const r = await kubectl([
        'get',
        'events',
        '-n',
        ns,
        '--field-selector',
        'involvedObject.name=ana-silva',
        '-o',
        'json',
      ]);
      return (JSON.parse(r.stdout) as { items: { reason: string; type: string }[] }).items.some(
        (e) => e.reason === 'DuplicateEmail' && e.type === 'Warning',
      );
    });
    const lease = await kubectl([
      'get',
      'lease',
      'endpoint-operator',
      '-n',
      ns,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    ]);
    expect(lease.stdout).not.toBe('');
    expect((await login(a, 'ana.silva@example.com')).status).toBe(401);
    expect((await kubectl(['delete', 'adminuser', 'ana-admin', '-n', ns])).code).toBe(0);
    await eventually('ana to sign in again', async () => (await login(b, 'ana.silva@example.com')).status === 200);
    await eventually(
      'ShopUser ana-silva Ready=True again',
      async () => (await readyOf('shopusers', 'ana-silva'))?.status === 'True',
    );
  });

  it('disabling a user or removing a membership with kubectl takes effect at the next request', async () => {
    const first = (await login(a, 'bruno.costa@example.com')).body!;
    const auth = (
      await call(a, 'POST', '/auth/pos/select-shop', { sessionToken: first.sessionToken, shopId: 'lisbon-baixa' })
    ).body!;
    const token = auth.accessToken as string;
    expect((await me(b, token, 'porto-ribeira')).status).toBe(200);
    const removed = await kubectl([
      'patch',
      'shopuser',
      'bruno-costa',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/memberships/1"}]',
    ]);
    expect(removed.code, removed.stderr).toBe(0);
    await eventually('porto membership gone', async () => (await me(b, token, 'porto-ribeira')).status === 403);
    expect((await me(a, token, 'lisbon-baixa')).status).toBe(200);
    const disabled = await kubectl([
      'patch',
      'shopuser',
      'bruno-costa',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"status":"disabled"}}',
    ]);
    expect(disabled.code, disabled.stderr).toBe(0);
    await eventually('bruno disabled', async () => (await me(a, token, 'lisbon-baixa')).status === 401);
    expect((await call(b, 'POST', '/auth/refresh', { refreshToken: auth.refreshToken })).status).toBe(401);
    expect((await login(a, 'bruno.costa@example.com')).status).toBe(401);
  });

  it('a missing password Secret is reported and refuses sign-in', async () => {
    const user = `apiVersion: pos.endpoint-operator.dev/v1
kind: ShopUser
metadata: { name: dora, namespace: ${ns} }
spec: { email: dora@example.com, displayName: Dora, passwordSecretRef: { name: dora-password, key: password }, memberships: [{ shop: lisbon-baixa, role: cashier }] }
`;
    expect((await kubectl(['apply', '-f', '-'], { input: user })).code).toBe(0);
    await eventually(
      'dora SecretNotFound',
      async () => (await readyOf('shopusers', 'dora'))?.reason === 'SecretNotFound',
    );
    expect((await login(a, 'dora@example.com')).status).toBe(401);
    // A Secret without the password label is not watched, hence not used.
    const hashed = await runCli(['hash-password'], { input: PASSWORD });
    expect(
      (
        await kubectl([
          'create',
          'secret',
          'generic',
          'dora-password',
          '-n',
          ns,
          `--from-literal=password=${hashed.stdout.trim()}`,
        ])
      ).code,
    ).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect((await login(a, 'dora@example.com')).status).toBe(401);
    await createPasswordSecret(ns, 'dora-password', PASSWORD);
    await eventually('dora signs in', async () => (await login(a, 'dora@example.com')).status === 200);
  });

  it('after logout the access token is refused within 1 s on both replicas', async () => {
    const first = (await login(a, 'ana.silva@example.com')).body!;
    const token = first.accessToken as string;
    expect((await me(a, token, 'lisbon-baixa')).status).toBe(200);
    expect((await me(b, token, 'lisbon-baixa')).status).toBe(200);
    const loggedOut = Date.now();
    expect((await call(a, 'POST', '/auth/logout', { refreshToken: first.refreshToken })).status).toBe(204);
    const refusedAfter = await Promise.all(
      [a, b].map(async (server) => {
        for (;;) {
          const res = await me(server, token, 'lisbon-baixa');
          if (res.status === 401) return Date.now() - loggedOut;
          expect(res.status).toBe(200);
          if (Date.now() - loggedOut > 5000) return Infinity;
          await new Promise((r) => setTimeout(r, 10));
        }
      }),
    );
    console.log(
      `access token refused after logout: replica a after ${refusedAfter[0]} ms, replica b after ${refusedAfter[1]} ms`,
    );
    expect(refusedAfter[0]).toBeLessThan(1000);
    expect(refusedAfter[1]).toBeLessThan(1000);
    // and a refresh-token reuse ends the family's access tokens on the other replica too
    const second = (await login(b, 'ana.silva@example.com')).body!;
    const rotated = (await call(b, 'POST', '/auth/refresh', { refreshToken: second.refreshToken })).body!;
    expect((await call(a, 'POST', '/auth/refresh', { refreshToken: second.refreshToken })).status).toBe(401);
    await eventually(
      'the rotated access token refused on b',
      async () => (await me(b, rotated.accessToken as string, 'lisbon-baixa')).status === 401,
      1000,
    );
  });

  it('a burst of 500 parallel wrong guesses over both replicas yields at most the account limit of 401s; a till that signed in before still gets in', async () => {
    const email = 'rita@example.com';
    const admin = (password: string, server: RunningKubernetesSignIn, from: string, cookie?: string) =>
      call(
        server,
        'POST',
        '/auth/admin/login',
        { email, password },
        { 'x-forwarded-for': from, ...(cookie ? { cookie } : {}) },
      );
    const before = await admin(PASSWORD, a, '192.0.2.50');
    expect(before.status).toBe(200);
    const cookie = (before.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^eo_device_/);
    const codes = (
      await Promise.all(
        Array.from({ length: 500 }, (_, i) => admin(`guess-${i}`, i % 2 === 0 ? a : b, `198.51.${i >> 8}.${i & 255}`)),
      )
    ).map((r) => r.status);
    const failures = codes.filter((c) => c === 401).length;
    expect(codes.filter((c) => c !== 401 && c !== 429)).toEqual([]);
    expect(failures).toBeLessThanOrEqual(100); // the default accountFailuresPerHour
    expect(failures).toBeGreaterThan(50);
    // the shared count is one Lease, written in blocks
    const leases = await client.list<KubeObject>(coreResources.leases, ns, { labelSelector: `${ATTEMPTS_LABEL}=true` });
    const lease = leases.items.find((l) => l.metadata.name === attemptLeaseName(email));
    const claimed = Number(lease?.metadata.annotations?.['pos.endpoint-operator.dev/claimed']);
    expect(claimed).toBeLessThanOrEqual(100);
    expect(Number(lease?.metadata.resourceVersion)).toBeGreaterThan(0);
    console.log(
      `burst of 500 over two replicas: ${failures} × 401, ${codes.length - failures} × 429, ${claimed} attempts claimed in the shared Lease`,
    );
    // an unknown client with the right password waits; the till that signed in before does not, on either replica
    expect((await admin(PASSWORD, b, '192.0.2.51')).status).toBe(429);
    expect((await admin(PASSWORD, b, '192.0.2.50', cookie)).status).toBe(200);
    expect((await admin(PASSWORD, a, '192.0.2.52', cookie)).status).toBe(200);
  });
});
