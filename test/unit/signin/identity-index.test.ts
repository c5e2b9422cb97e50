import { describe, expect, it } from 'vitest';
import { IdentityIndex } from '../../../src/signin/identity-index.js';
import { identityVerdict } from '../../../src/signin/identity-status.js';

const userObj = (name: string, email: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { email, displayName: name, passwordSecretRef: { name: 'pw', key: name }, ...extra },
});

describe('IdentityIndex', () => {
  it('indexes one identity per email across ShopUsers and AdminUsers', () => {
    const idx = new IdentityIndex();
    let changes = 0;
    idx.onChange(() => changes++);
    idx.upsertShopUser(userObj('a', 'a@example.com'));
    expect(idx.lookupEmail('A@EXAMPLE.COM')).toMatchObject({
      outcome: 'found',
      identity: { id: 'a', kind: 'ShopUser' },
    });
    idx.upsertAdminUser({
      metadata: { name: 'b' },
      spec: { email: 'a@example.com', name: 'B', role: 'admin', passwordSecretRef: { name: 'pw', key: 'b' } },
    });
    expect(idx.lookupEmail('a@example.com')).toEqual({ outcome: 'ambiguous' });
    expect(idx.identity({ kind: 'ShopUser', name: 'a' })).toBeUndefined();
    // changing one email resolves the clash
    idx.upsertAdminUser({
      metadata: { name: 'b' },
      spec: { email: 'b@example.com', name: 'B', role: 'admin', passwordSecretRef: { name: 'pw', key: 'b' } },
    });
    expect(idx.lookupEmail('a@example.com').outcome).toBe('found');
    expect(idx.duplicateEmails().size).toBe(0);
    expect(changes).toBe(3);
  });

  it('drops an object whose spec no longer passes its schema', () => {
    const idx = new IdentityIndex();
    idx.upsertShopUser(userObj('a', 'a@example.com'));
    idx.upsertShopUser({ metadata: { name: 'a' }, spec: { email: 42 } });
    expect(idx.lookupEmail('a@example.com').outcome).toBe('unknown');
  });

  it('reads password hashes from base64 Secret data', () => {
    const idx = new IdentityIndex();
    idx.upsertSecret({ metadata: { name: 'pw' }, data: { a: Buffer.from('$argon2id$x\n').toString('base64') } });
    expect(idx.passwordHash({ name: 'pw', key: 'a' })).toBe('$argon2id$x');
    expect(idx.passwordHash({ name: 'pw', key: 'b' })).toBeUndefined();
    idx.removeSecret('pw');
    expect(idx.passwordHash({ name: 'pw', key: 'a' })).toBeUndefined();
  });

  it('explains in the Ready verdict why a user cannot sign in', () => {
    const idx = new IdentityIndex();
    const a = userObj('a', 'a@example.com', { memberships: [{ shop: 'gone', role: 'cashier' }] });
    idx.upsertShopUser(a);
    expect(identityVerdict(idx, 'ShopUser', a)).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    idx.upsertSecret({ metadata: { name: 'pw' }, data: { a: Buffer.from('plaintext!').toString('base64') } });
    expect(identityVerdict(idx, 'ShopUser', a)).toMatchObject({ status: 'False', reason: 'InvalidPasswordHash' });
    idx.upsertSecret({
      metadata: { name: 'pw' },
      data: { a: Buffer.from('$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g').toString('base64') },
    });
    expect(identityVerdict(idx, 'ShopUser', a)).toMatchObject({
      status: 'False',
      reason: 'ShopNotFound',
      message: expect.stringContaining('spec.memberships[0].shop'),
    });
    idx.upsertShop({ metadata: { name: 'gone' }, spec: { displayName: 'Back', code: 'B-1' } });
    expect(identityVerdict(idx, 'ShopUser', a)).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(
      identityVerdict(idx, 'ShopUser', { metadata: { name: 'x' }, spec: { email: 'X@example.com' } }),
    ).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
  });
});
