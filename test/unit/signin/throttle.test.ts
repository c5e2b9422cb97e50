import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/signin/clock.js';
import { FailureThrottle } from '../../../src/signin/throttle.js';
import { json, PASSWORD, testApp } from './fixtures.js';

const HOUR = 3_600_000;

describe('FailureThrottle', { timeout: 30_000 }, () => {
  it('allows 100 failures per hour per key, then answers with the wait until the oldest leaves the window', () => {
    const clock = new ManualClock();
    const t = new FailureThrottle(100, HOUR, clock);
    for (let i = 0; i < 100; i++) {
      expect(t.check('a').allowed).toBe(true);
      t.recordFailure('a');
      clock.advance(1000);
    }
    const blocked = t.check('a');
    expect(blocked.allowed).toBe(false);
    expect(blocked.retryAfterSeconds).toBe(3600 - 100);
    expect(t.check('b').allowed).toBe(true);
    clock.advance(blocked.retryAfterSeconds * 1000);
    expect(t.check('a').allowed).toBe(true); // the first failure left the sliding window
    t.recordFailure('a');
    expect(t.check('a').allowed).toBe(false);
  });

  it('keeps memory bounded by evicting the least recently failed key', () => {
    const clock = new ManualClock();
    const t = new FailureThrottle(1, HOUR, clock, 2);
    t.recordFailure('a');
    t.recordFailure('b');
    t.recordFailure('c');
    expect(t.check('a').allowed).toBe(true);
    expect(t.check('b').allowed).toBe(false);
    expect(t.check('c').allowed).toBe(false);
  });
});

describe('sign-in throttling', { timeout: 30_000 }, () => {
  it('defaults to 100 failures per hour per account', async () => {
    const { app, context } = await testApp();
    for (let i = 0; i < 99; i++) context.accountThrottle.recordFailure('ana@example.com');
    const r = json({ email: 'ana@example.com', password: 'wrong' });
    expect((await app.inject({ method: 'POST', url: '/auth/pos/login', ...r })).statusCode).toBe(401); // the 100th failure
    const ok = json({ email: 'ANA@example.com', password: PASSWORD });
    const blocked = await app.inject({ method: 'POST', url: '/auth/pos/login', ...ok });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
    await app.close();
  });

  it('throttles per client address across accounts', async () => {
    const { app } = await testApp({ ipFailuresPerHour: 2 });
    const attempt = (email: string, password: string) => app.inject({ method: 'POST', url: '/auth/pos/login', remoteAddress: '203.0.113.9', ...json({ email, password }) });
    expect((await attempt('x1@example.com', 'a')).statusCode).toBe(401);
    expect((await attempt('x2@example.com', 'b')).statusCode).toBe(401);
    expect((await attempt('ana@example.com', PASSWORD)).statusCode).toBe(429);
    const other = await app.inject({ method: 'POST', url: '/auth/pos/login', remoteAddress: '198.51.100.7', ...json({ email: 'ana@example.com', password: PASSWORD }) });
    expect(other.statusCode).toBe(200);
    await app.close();
  });
});
