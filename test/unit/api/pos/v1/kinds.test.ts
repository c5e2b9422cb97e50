import { describe, expect, it } from 'vitest';
import { crdFor } from '../../../../../src/api/crd/generate.js';
import { celRules } from '../../../../../src/api/crd/openapi.js';
import type { JSONSchemaProps } from '../../../../../src/api/crd/openapi.js';
import { defaultValidationOptions, type KindDefinition } from '../../../../../src/api/common/kind.js';
import { allKinds } from '../../../../../src/api/kinds.js';
import { adminUserKind, posKinds, shopUserKind, signInSessionKind } from '../../../../../src/api/pos/v1/index.js';

const validate = (kind: KindDefinition, obj: unknown) =>
  kind.versions[0]!.validate(obj, undefined, defaultValidationOptions);
const user = (spec: Record<string, unknown>) => ({
  apiVersion: 'pos.endpoint-operator.dev/v1',
  kind: 'ShopUser',
  metadata: { name: 'u' },
  spec: { email: 'u@example.com', displayName: 'U', passwordSecretRef: { name: 'pw', key: 'password' }, ...spec },
});

describe('POS kinds', () => {
  it('are registered in allKinds', () => {
    for (const k of posKinds) expect(allKinds).toContain(k);
  });

  it('generate structural CRDs with Ready/Reason/Age columns and the endpoint-operator category', () => {
    for (const k of posKinds) {
      const crd = crdFor(k);
      const [v] = crd.spec.versions as { additionalPrinterColumns: { name: string }[] }[];
      const names = v!.additionalPrinterColumns.map((c) => c.name);
      expect(names).toEqual(expect.arrayContaining(['Ready', 'Reason', 'Age']));
      expect((crd.spec.names as { categories: string[] }).categories).toEqual(['endpoint-operator']);
    }
  });

  it('make the SignInSession purpose and subject immutable by CEL', () => {
    const crd = crdFor(signInSessionKind);
    const schema = (crd.spec.versions as { schema: { openAPIV3Schema: JSONSchemaProps } }[])[0]!.schema.openAPIV3Schema;
    expect(
      celRules(schema)
        .map((r) => r.path)
        .sort(),
    ).toEqual(['spec.purpose', 'spec.subject']);
  });

  it('accept a minimal user and default status and memberships', () => {
    expect(validate(shopUserKind, user({})).errors).toEqual([]);
  });

  it('never throw on garbage', () => {
    for (const junk of [
      null,
      42,
      'x',
      [],
      {},
      { spec: null },
      { spec: [] },
      { spec: { email: 5 } },
      user({ memberships: 'x' }),
    ]) {
      for (const k of posKinds) expect(() => validate(k, junk)).not.toThrow();
    }
    expect(validate(shopUserKind, {}).errors[0]?.field).toBe('spec');
  });

  it('report every membership rule with its path', () => {
    const r = validate(
      shopUserKind,
      user({
        email: 'U@Example.com',
        memberships: [
          { shop: 'a', role: 'cashier' },
          { shop: 'b', role: 'owner' },
          { shop: 'a', role: 'manager' },
        ],
      }),
    );
    expect(r.errors.map((e) => [e.field, e.type])).toEqual([
      ['spec.email', 'FieldValueInvalid'],
      ['spec.memberships[2].shop', 'FieldValueDuplicate'],
    ]);
  });

  it('bound emails by RFC 5321 lengths', () => {
    expect(validate(shopUserKind, user({ email: `${'a'.repeat(64)}@example.com` })).errors).toEqual([]);
    expect(validate(shopUserKind, user({ email: `${'a'.repeat(65)}@example.com` })).errors[0]?.field).toBe(
      'spec.email',
    );
    expect(validate(shopUserKind, user({ email: `a@${'b'.repeat(250)}.com` })).errors[0]?.field).toBe('spec.email');
    expect(validate(shopUserKind, user({ email: 'a@b.' + 'c'.repeat(64) })).errors[0]?.detail).toMatch(
      /labels of 1 to 63/,
    );
  });

  it('check admin roles and session consistency', () => {
    const admin = {
      spec: { email: 'r@example.com', name: 'R', role: 'support', passwordSecretRef: { name: 'pw', key: 'k' } },
    };
    expect(validate(adminUserKind, admin).errors).toEqual([]);
    const hash = 'A'.repeat(43);
    const session = (spec: Record<string, unknown>) => ({
      spec: {
        purpose: 'refresh',
        subject: { kind: 'ShopUser', name: 'u' },
        tokenHash: hash,
        expiresAt: '2026-01-01T00:00:00Z',
        ...spec,
      },
    });
    expect(validate(signInSessionKind, session({})).errors).toEqual([]);
    expect(validate(signInSessionKind, session({ revokedReason: 'Logout' })).errors[0]?.field).toBe(
      'spec.revokedReason',
    );
    expect(validate(signInSessionKind, session({ previousTokenHashes: ['B'.repeat(43), hash] })).errors[0]?.field).toBe(
      'spec.previousTokenHashes[1]',
    );
  });
});
