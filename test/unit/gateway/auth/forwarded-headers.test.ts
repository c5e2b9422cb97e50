import { describe, expect, it } from 'vitest';
import { withoutCredentials } from '../../../../src/gateway/auth/forwarded-headers.js';

describe('withoutCredentials', () => {
  it('drops Authorization, Proxy-Authorization and Cookie whatever their case, and keeps the rest', () => {
    expect(
      withoutCredentials({
        'content-type': 'application/json',
        Authorization: 'Bearer t',
        cookie: 'a=b',
        'Proxy-Authorization': 'Basic x',
        traceparent: '00-1-2-01',
      }),
    ).toEqual({ 'content-type': 'application/json', traceparent: '00-1-2-01' });
  });
  it('returns the same object when there is nothing to drop (no allocation on the hot path)', () => {
    const headers = { 'content-type': 'application/json' };
    expect(withoutCredentials(headers)).toBe(headers);
  });
});
