import { describe, expect, it } from 'vitest';
import { ReviewLimiter, ReviewThrottledError } from '../../../../src/gateway/auth/review-limiter.js';

describe('ReviewLimiter', () => {
  it('refuses at once beyond the reviews in flight, and admits again when one settles', async () => {
    const limiter = new ReviewLimiter({ maxInFlight: 2, perSecond: 100, clock: { now: () => 0 } });
    const releases: (() => void)[] = [];
    const held = () => limiter.run(() => new Promise<void>((r) => releases.push(r)));
    const a = held();
    const b = held();
    await expect(limiter.run(async () => 'x')).rejects.toBeInstanceOf(ReviewThrottledError);
    releases[0]?.();
    await a;
    expect(await limiter.run(async () => 'y')).toBe('y');
    releases[1]?.();
    await b;
  });

  it('admits `perSecond` reviews per second on average, refilled with time', async () => {
    let now = 0;
    const limiter = new ReviewLimiter({ maxInFlight: 1000, perSecond: 10, clock: { now: () => now } });
    const outcomes = async (n: number) =>
      (await Promise.allSettled(Array.from({ length: n }, () => limiter.run(async () => 1)))).filter(
        (r) => r.status === 'fulfilled',
      ).length;
    expect(await outcomes(25)).toBe(10);
    now += 500;
    expect(await outcomes(25)).toBe(5);
    now += 10_000; // the bucket holds one second's worth, not ten
    expect(await outcomes(25)).toBe(10);
  });

  it('frees the slot when the review fails', async () => {
    const limiter = new ReviewLimiter({ maxInFlight: 1, perSecond: 100, clock: { now: () => 0 } });
    await expect(
      limiter.run(async () => {
        throw new Error('down');
      }),
    ).rejects.toThrow('down');
    expect(await limiter.run(async () => 'ok')).toBe('ok');
  });
});

describe('ReviewLimiter renewals', () => {
  it('lets the renewal of a known decision through when the budget is spent', async () => {
    const limiter = new ReviewLimiter({ maxInFlight: 1, perSecond: 1, clock: { now: () => 0 } });
    let release!: () => void;
    const held = limiter.run(() => new Promise<void>((r) => (release = r)));
    await expect(limiter.run(async () => 'stranger')).rejects.toBeInstanceOf(ReviewThrottledError);
    expect(await limiter.run(async () => 'renewal', true)).toBe('renewal');
    release();
    await held;
  });
});
