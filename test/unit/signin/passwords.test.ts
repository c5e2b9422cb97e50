import { describe, expect, it } from 'vitest';
import { hashPassword, meetsMinimum, parsePhc, PasswordVerifier } from '../../../src/signin/passwords.js';
import { main } from '../../../src/main.js';
import { callMain } from '../../support/cli.js';
import { IdentityIndex } from '../../../src/signin/identity-index.js';
import { PARAMS, passwordHash, secret } from './fixtures.js';

describe('passwords', { timeout: 30_000 }, () => {
  it('hash with argon2id at the OWASP minimum and verify', async () => {
    const phc = await hashPassword('s3cret', PARAMS);
    expect(phc).toMatch(/^\$argon2id\$v=19\$/);
    expect(parsePhc(phc)).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    const v = await PasswordVerifier.create(PARAMS);
    expect(await v.verify(phc, 's3cret')).toBe(true);
    expect(await v.verify(phc, 's3cret ')).toBe(false);
    expect(await v.verify(undefined, 's3cret')).toBe(false);
  });

  it('verify unknown emails against a dummy as costly as the strongest hash in the directory', async () => {
    const index = new IdentityIndex();
    const strong = { memoryCost: 19_456, timeCost: 3, parallelism: 1 };
    expect(index.strongestPasswordParams()).toBeUndefined();
    index.upsertSecret(secret('pw', 'default', await passwordHash()));
    index.upsertShopUser({
      metadata: { name: 'a' },
      spec: {
        email: 'a@example.com',
        displayName: 'A',
        passwordSecretRef: { name: 'pw', key: 'default' },
        memberships: [],
      },
    });
    expect(index.strongestPasswordParams()).toEqual(PARAMS);
    index.upsertSecret(secret('pw-strong', 'strong', await hashPassword('x', strong)));
    expect(index.strongestPasswordParams()).toEqual(PARAMS); // no identity uses it yet
    index.upsertShopUser({
      metadata: { name: 'b' },
      spec: {
        email: 'b@example.com',
        displayName: 'B',
        passwordSecretRef: { name: 'pw-strong', key: 'strong' },
        memberships: [],
      },
    });
    expect(index.strongestPasswordParams()).toEqual(strong);
    const v = await PasswordVerifier.create(PARAMS);
    expect(v.dummyParams(index.strongestPasswordParams())).toEqual(strong);
    expect(v.dummyParams({ memoryCost: 19_456, timeCost: 1, parallelism: 1 })).toEqual(PARAMS); // never below the base
    expect(await v.verify(undefined, 'x', strong)).toBe(false);
  });

  it('refuse hashes weaker than the minimum, other algorithms and junk', async () => {
    const weak = await hashPassword('s3cret', { memoryCost: 4096, timeCost: 1, parallelism: 1 });
    const v = await PasswordVerifier.create(PARAMS);
    expect(await v.verify(weak, 's3cret')).toBe(false);
    expect(await v.verify('$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g', 's3cret')).toBe(false);
    expect(await v.verify('s3cret', 's3cret')).toBe(false);
    // OWASP's equivalent configurations pass; anything cheaper in memory or iterations does not.
    for (const [memoryCost, timeCost] of [
      [47_104, 1],
      [19_456, 2],
      [12_288, 3],
      [9_216, 4],
      [7_168, 5],
    ] as const) {
      expect(meetsMinimum({ memoryCost, timeCost, parallelism: 1 })).toBe(true);
      expect(meetsMinimum({ memoryCost: memoryCost - 1, timeCost, parallelism: 1 })).toBe(false);
    }
    expect(meetsMinimum({ memoryCost: 19_456, timeCost: 1, parallelism: 1 })).toBe(false);
  });
});

describe('endpoint-operator hash-password', () => {
  it('reads stdin and prints a PHC string that verifies, without echoing the password', async () => {
    const r = await callMain(main, ['hash-password'], { input: 'correct horse\n' });
    expect(r.code, r.stderr).toBe(0);
    const phc = r.stdout.trim();
    expect(phc).not.toContain('correct horse');
    expect(await (await PasswordVerifier.create(PARAMS)).verify(phc, 'correct horse')).toBe(true);
  });

  it('prints a Secret manifest with --secret', async () => {
    const r = await callMain(
      main,
      ['hash-password', '--secret', 'ana-password', '--namespace', 'shop', '--key', 'pw'],
      {
        input: 'x',
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/kind: Secret\n/);
    expect(r.stdout).toContain("pos.endpoint-operator.dev/password: 'true'");
    expect(r.stdout).toMatch(/namespace: shop/);
    expect(r.stdout).toMatch(/pw: \$argon2id\$/);
  });

  it('refuses an empty password and weak parameters', async () => {
    expect((await callMain(main, ['hash-password'], { input: '' })).code).toBe(1);
    const weak = await callMain(main, ['hash-password', '--memory-kib', '1024'], { input: 'x' });
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(/OWASP/);
    expect((await callMain(main, ['hash-password', '--time-cost', 'two'], { input: 'x' })).code).toBe(2);
  });
});
