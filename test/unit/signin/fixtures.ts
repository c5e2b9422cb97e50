import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../support/manual-clock.js';
import { IdentityIndex } from '../../../src/signin/identity-index.js';
import { hashPassword, type Argon2Params } from '../../../src/signin/passwords.js';
import { buildSignInApp, type SignInServerOptions } from '../../../src/signin/server.js';
import { MemorySessionStore } from '../../../src/signin/sessions.js';
import { MemorySigningKeyStore } from '../../../src/signin/signing-key.js';

export const PASSWORD = 'correct horse battery staple';
// The OWASP minimum: the verifier refuses anything weaker, so tests use the real thing.
export const PARAMS: Argon2Params = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

let sharedHash: Promise<string> | undefined;
export function passwordHash(): Promise<string> {
  sharedHash ??= hashPassword(PASSWORD, PARAMS);
  return sharedHash;
}

export const shop = (name: string, displayName: string, code: string) => ({
  metadata: { name },
  spec: { displayName, code },
});
export const secret = (name: string, key: string, value: string) => ({
  metadata: { name },
  data: { [key]: Buffer.from(value).toString('base64') },
});

/** A small world: two shops, a cashier in one, a manager in both, an admin. */
export async function seedDirectory(): Promise<IdentityIndex> {
  const index = new IdentityIndex();
  const hash = await passwordHash();
  index.upsertShop(shop('lisbon-1', 'Lisbon Baixa', 'LIS-001'));
  index.upsertShop(shop('porto-1', 'Porto Ribeira', 'OPO-001'));
  index.upsertSecret(secret('passwords', 'ana', hash));
  index.upsertSecret(secret('passwords-2', 'bruno', hash));
  index.upsertSecret(secret('admin-password', 'password', hash));
  index.upsertShopUser({
    metadata: { name: 'ana' },
    spec: {
      email: 'ana@example.com',
      displayName: 'Ana Silva',
      passwordSecretRef: { name: 'passwords', key: 'ana' },
      memberships: [{ shop: 'lisbon-1', role: 'cashier', profile: { employeeCode: 'E-17' } }],
    },
  });
  index.upsertShopUser({
    metadata: { name: 'bruno' },
    spec: {
      email: 'bruno@example.com',
      displayName: 'Bruno Costa',
      passwordSecretRef: { name: 'passwords-2', key: 'bruno' },
      memberships: [
        { shop: 'lisbon-1', role: 'manager' },
        { shop: 'porto-1', role: 'cashier', profile: { displayName: 'Bruno C.' } },
      ],
    },
  });
  index.upsertAdminUser({
    metadata: { name: 'root' },
    spec: {
      email: 'root@example.com',
      name: 'Rita Admin',
      role: 'superadmin',
      passwordSecretRef: { name: 'admin-password', key: 'password' },
    },
  });
  return index;
}

export async function testApp(overrides: Partial<SignInServerOptions> = {}) {
  const directory = await seedDirectory();
  const sessions = new MemorySessionStore();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const built = await buildSignInApp({
    directory,
    sessions,
    signingKeys: new MemorySigningKeyStore(),
    clock,
    logger: false,
    argon2: PARAMS,
    ...overrides,
  });
  return { ...built, directory, sessions, clock };
}

export function json(body: unknown) {
  return { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
}

/** POSTs `body` as JSON to the app (fastify inject), with extra headers. */
export function postJson(app: FastifyInstance, url: string, body: unknown, headers: Record<string, string> = {}) {
  const r = json(body);
  return app.inject({ method: 'POST', url, payload: r.payload, headers: { ...r.headers, ...headers } });
}
