import { describe, expect, it } from 'vitest';
import { jwtExpiryMs, Keyer } from '../../../../src/gateway/auth/keys.js';

const jwt = (claims: unknown) =>
  `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('jwtExpiryMs', () => {
  it('reads exp (seconds) of a JWT as milliseconds', () => {
    expect(jwtExpiryMs(jwt({ exp: 1_700_000_000, aud: ['x'] }))).toBe(1_700_000_000_000);
  });
  it('is undefined for tokens that are not JWTs or have no numeric exp', () => {
    expect(jwtExpiryMs('opaque-token')).toBeUndefined();
    expect(jwtExpiryMs('a.b')).toBeUndefined();
    expect(jwtExpiryMs('a.!!!.c')).toBeUndefined();
    expect(jwtExpiryMs(jwt({ exp: '1700000000' }))).toBeUndefined();
  });
});

describe('Keyer', () => {
  const user = { username: 'system:serviceaccount:ns:a', uid: 'u-1', groups: ['g'], extra: {} };
  it('gives a stable key that holds neither the token nor the user name', () => {
    const k = new Keyer();
    expect(k.of('token', 'secret-token')).toBe(k.of('token', 'secret-token'));
    expect(k.of('token', 'secret-token')).not.toContain('secret');
    expect(k.principal(user)).not.toContain('serviceaccount');
  });
  it('differs between processes (a per-process random key) and between principals', () => {
    expect(new Keyer().of('token', 't')).not.toBe(new Keyer().of('token', 't'));
    const k = new Keyer();
    expect(k.principal(user)).not.toBe(k.principal({ ...user, uid: 'u-2' }));
    expect(k.user(user)).not.toBe(k.user({ ...user, groups: ['g', 'admins'] }));
    expect(k.of('ab', 'c')).not.toBe(k.of('a', 'bc'));
  });
});
