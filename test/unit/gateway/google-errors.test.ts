import { describe, expect, it } from 'vitest';
import { checkSystemParameters, GoogleApiError } from '../../../src/gateway/google-errors.js';

describe('GoogleApiError', () => {
  it('answers in Google JSON error form with the canonical HTTP code of its status', () => {
    expect(new GoogleApiError('FAILED_PRECONDITION', 'no traffic').body()).toEqual({
      error: { code: 400, message: 'no traffic', status: 'FAILED_PRECONDITION' },
    });
    expect(new GoogleApiError('NOT_FOUND', 'x').httpCode).toBe(404);
    expect(new GoogleApiError('DEADLINE_EXCEEDED', 'x').httpCode).toBe(504);
  });

  it('keeps an explicit HTTP code in the body as well', () => {
    expect(new GoogleApiError('UNAVAILABLE', 'bad gateway', 502).body().error).toEqual({
      code: 502,
      message: 'bad gateway',
      status: 'UNAVAILABLE',
    });
  });
});

describe('checkSystemParameters', () => {
  it.each([
    {},
    { alt: 'json' },
    { $alt: 'JSON' },
    { alt: 'json;enum-encoding=int' },
    { prettyPrint: 'false', fields: 'a,b', key: 'k' },
  ])('accepts %j', (q) => {
    expect(checkSystemParameters(q)).toBeUndefined();
  });

  it.each([{ alt: 'proto' }, { $alt: 'media' }, { alt: ['json', 'xml'] }])('refuses %j naming the parameter', (q) => {
    const err = checkSystemParameters(q);
    expect(err?.status).toBe('INVALID_ARGUMENT');
    expect(err?.message).toMatch(/system parameter "\$?alt"/);
  });
});
