import { describe, expect, it } from 'vitest';
import { GoogleApiError } from '../../../src/gateway/google-errors.js';
import { CallerLimiter, MAX_HELD_REFUSALS_PER_CALLER } from '../../../src/gateway/fairness.js';

describe('per-caller limits of the gateway', () => {
  it('admits up to the call count per caller, refuses one more with RESOURCE_EXHAUSTED, and other callers are unaffected', () => {
    const limiter = new CallerLimiter(2, 10_000);
    const a1 = limiter.acquire('a', 10);
    const a2 = limiter.acquire('a', 10);
    const a3 = limiter.acquire('a', 10);
    expect(a3).toBeInstanceOf(GoogleApiError);
    expect((a3 as GoogleApiError).status).toBe('RESOURCE_EXHAUSTED');
    expect((a3 as GoogleApiError).httpCode).toBe(429);
    expect(limiter.acquire('b', 10)).toBeTypeOf('function');
    if (typeof a1 !== 'function' || typeof a2 !== 'function') throw new Error('admitted expected');
    a1();
    a1(); // a second release counts nothing
    expect(limiter.acquire('a', 10)).toBeTypeOf('function');
    expect(limiter.acquire('a', 10)).toBeInstanceOf(GoogleApiError);
  });

  it('bounds the body bytes in flight per caller, but always admits a caller with nothing in flight', () => {
    const limiter = new CallerLimiter(64, 3_000_000);
    const big1 = limiter.acquire('bulk', 1_400_000);
    const big2 = limiter.acquire('bulk', 1_400_000);
    const big3 = limiter.acquire('bulk', 1_400_000);
    expect(typeof big1).toBe('function');
    expect(typeof big2).toBe('function');
    expect((big3 as GoogleApiError).message).toMatch(/at most 3000000 bytes of bodies in flight per caller/);
    expect(typeof limiter.acquire('bulk', 100)).toBe('function');
    const huge = new CallerLimiter(64, 1_000).acquire('x', 5_000);
    expect(typeof huge).toBe('function');
  });

  describe('holdRefusal', () => {
    const settled = async (p: Promise<void>, withinMs: number): Promise<boolean> =>
      Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), withinMs))]);

    it("waits until one of the caller's calls ends, not for the whole hold", async () => {
      const limiter = new CallerLimiter(64, 3_000_000);
      const release = limiter.acquire('bulk', 1_400_000);
      if (typeof release !== 'function') throw new Error('admitted expected');
      const held = limiter.holdRefusal('bulk', 10_000);
      expect(await settled(held, 50)).toBe(false);
      release();
      expect(await settled(held, 50)).toBe(true);
    });

    it('answers after the hold when no call ends, and at once for a caller with nothing in flight', async () => {
      const limiter = new CallerLimiter(64, 3_000_000);
      expect(typeof limiter.acquire('bulk', 1_400_000)).toBe('function');
      const started = performance.now();
      await limiter.holdRefusal('bulk', 80);
      expect(performance.now() - started).toBeGreaterThanOrEqual(70);
      expect(await settled(limiter.holdRefusal('idle', 10_000), 20)).toBe(true);
    });

    it('holds at most MAX_HELD_REFUSALS_PER_CALLER refusals of one caller; the next is answered at once, other callers keep theirs', async () => {
      const limiter = new CallerLimiter(64, 3_000_000);
      const release = limiter.acquire('bulk', 1_400_000);
      expect(typeof limiter.acquire('other', 1_400_000)).toBe('function');
      if (typeof release !== 'function') throw new Error('admitted expected');
      const held = Array.from({ length: MAX_HELD_REFUSALS_PER_CALLER }, () => limiter.holdRefusal('bulk', 10_000));
      expect(await settled(limiter.holdRefusal('bulk', 10_000), 20)).toBe(true);
      const otherHeld = limiter.holdRefusal('other', 10_000);
      expect(await settled(otherHeld, 20)).toBe(false);
      release();
      expect(
        await settled(
          Promise.all(held).then(() => undefined),
          50,
        ),
      ).toBe(true);
      expect(await settled(otherHeld, 20)).toBe(false);
    });
  });
});
