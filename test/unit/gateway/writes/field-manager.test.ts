import { describe, expect, it } from 'vitest';
import {
  fieldManagerOf,
  isApiManager,
  MAX_FIELD_MANAGER_LENGTH,
} from '../../../../src/gateway/writes/field-manager.js';

describe('fieldManagerOf', () => {
  it('names the caller under vertex-api/', () => {
    expect(fieldManagerOf('system:serviceaccount:team-a:notebook')).toBe(
      'vertex-api/system:serviceaccount:team-a:notebook',
    );
    expect(isApiManager(fieldManagerOf('alice@example.com'))).toBe(true);
    expect(isApiManager('argocd-controller')).toBe(false);
  });

  it('cuts a long name to 128 characters and ends it with a hash of the whole name', () => {
    const a = fieldManagerOf(`${'x'.repeat(200)}a`);
    const b = fieldManagerOf(`${'x'.repeat(200)}b`);
    expect(a).toHaveLength(MAX_FIELD_MANAGER_LENGTH);
    expect(b).toHaveLength(MAX_FIELD_MANAGER_LENGTH);
    expect(a).not.toBe(b);
    expect(a.startsWith('vertex-api/xxx')).toBe(true);
  });

  it('keeps only printable ASCII, and tells apart names that differ only outside it', () => {
    const m = fieldManagerOf('zoë');
    expect(m).toMatch(/^vertex-api\/zo\?~[0-9a-f]{10}$/);
    expect(fieldManagerOf('zoé')).not.toBe(m);
  });
});
