import { describe, expect, it } from 'vitest';
import { closesRatherThanReads } from '../../../src/http/unread-body.js';

const LARGE = 256 * 1024;
const body = (headers: Record<string, string>, over: { complete?: boolean; awaitingContinue?: boolean } = {}) =>
  ({ headers, complete: over.complete ?? false, awaitingContinue: over.awaitingContinue ?? false });

describe('closesRatherThanReads', () => {
  it('closes for a large declared body that has not arrived, and reads a smaller one', () => {
    expect(closesRatherThanReads(body({ 'content-length': String(LARGE) }), LARGE)).toBe(true);
    expect(closesRatherThanReads(body({ 'content-length': '1440000' }), LARGE)).toBe(true);
    expect(closesRatherThanReads(body({ 'content-length': String(LARGE - 1) }), LARGE)).toBe(false);
  });

  it('reads nothing when there is no body or it has all arrived', () => {
    expect(closesRatherThanReads(body({}), LARGE)).toBe(false);
    expect(closesRatherThanReads(body({ 'content-length': '0' }), LARGE)).toBe(false);
    expect(closesRatherThanReads(body({ 'content-length': '1440000' }, { complete: true }), LARGE)).toBe(false);
  });

  it('closes for a chunked body, whose length is unknown', () => {
    expect(closesRatherThanReads(body({ 'transfer-encoding': 'chunked' }), LARGE)).toBe(true);
  });

  it('closes for any body the client holds back until 100 Continue, however small', () => {
    expect(closesRatherThanReads(body({ 'content-length': '20' }, { awaitingContinue: true }), LARGE)).toBe(true);
    expect(closesRatherThanReads(body({ 'content-length': '0' }, { awaitingContinue: true }), LARGE)).toBe(false);
  });
});
