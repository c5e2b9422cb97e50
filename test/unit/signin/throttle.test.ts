import { describe, expect, it } from 'vitest';
import { AccountBudget, MemoryAttemptLedger, type AttemptLedger } from '../../../src/signin/account-budget.js';
import { ManualClock } from '../../support/manual-clock.js';
import { FailureWindow, GrowingDelay, type Admission } from '../../../src/signin/throttle.js';
import { json, PASSWORD, testApp } from './fixtures.js';

const HOUR = 3_600_000;
const take = (a: Admission) => {
  if (!a.admitted) throw new Error(`refused, retry after ${a.retryAfterSeconds} s`);
  return a.reservation;
};

describe('FailureWindow', () => {
  it('counts an attempt before it is settled, so a burst gets no more than the limit', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const w = new FailureWindow(3, HOUR, clock);
    const burst = Array.from({ length: 10 }, () => w.admit('a'));
    expect(burst.filter((a) => a.admitted)).toHaveLength(3);
    for (const a of burst) if (a.admitted) a.reservation.settle(true);
    const refused = w.admit('a');
    expect(refused).toEqual({ admitted: false, retryAfterSeconds: 3600 });
    expect(w.admit('b').admitted).toBe(true);
    await clock.advance(HOUR);
    expect(w.admit('a').admitted).toBe(true);
  });

  it('gives the place back on success', () => {
    const w = new FailureWindow(1, HOUR, new ManualClock(Date.UTC(2026, 0, 1)));
    take(w.admit('a')).settle(false);
    take(w.admit('a')).settle(false);
    take(w.admit('a')).settle(true);
    expect(w.admit('a').admitted).toBe(false);
  });
});

describe('GrowingDelay', () => {
  it('lets a few failures through, then doubles the wait and admits one attempt at a time', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const d = new GrowingDelay(clock, { freeFailures: 2, baseDelayMs: 1000 });
    const burst = Array.from({ length: 20 }, () => d.admit('k'));
    expect(burst.filter((a) => a.admitted)).toHaveLength(2);
    for (const a of burst) if (a.admitted) a.reservation.settle(true);
    expect(d.admit('k')).toEqual({ admitted: false, retryAfterSeconds: 1 });
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const refused = d.admit('k');
      if (refused.admitted) throw new Error('expected a delay');
      waits.push(refused.retryAfterSeconds);
      await clock.advance(refused.retryAfterSeconds * 1000);
      const a = take(d.admit('k'));
      expect(d.admit('k').admitted).toBe(false); // one in flight at a time
      a.settle(true);
    }
    expect(waits).toEqual([1, 2, 4, 8]);
    d.reset('k');
    expect(d.admit('k').admitted).toBe(true);
  });
});

describe('AccountBudget', () => {
  it('never grants more than the limit in a window across replicas sharing a ledger, with few ledger writes', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const memory = new MemoryAttemptLedger(clock);
    let writes = 0;
    const ledger: AttemptLedger = {
      claim: async (...args) => {
        writes++;
        await new Promise((r) => setTimeout(r, 1)); // a round trip: replicas interleave
        return memory.claim(...args);
      },
    };
    const replicas = [new AccountBudget(ledger, 40, HOUR, clock), new AccountBudget(ledger, 40, HOUR, clock)];
    const admissions = await Promise.all(
      Array.from({ length: 500 }, (_, i) => replicas[i % 2]!.admit('victim@example.com')),
    );
    const granted = admissions.filter((a) => a.admitted);
    expect(granted).toHaveLength(40);
    for (const a of granted) if (a.admitted) a.reservation.settle(true);
    expect((await replicas[0]!.admit('victim@example.com')).admitted).toBe(false);
    expect(writes).toBeLessThanOrEqual(40 / 4 + 4);
    await clock.advance(HOUR);
    expect((await replicas[1]!.admit('victim@example.com')).admitted).toBe(true);
  });
});

describe('sign-in throttling over HTTP', { timeout: 60_000 }, () => {
  const LIMIT = 20;
  const guess = (
    app: Awaited<ReturnType<typeof testApp>>['app'],
    remoteAddress: string,
    password = 'wrong',
    cookie?: string,
  ) =>
    app.inject({
      method: 'POST',
      url: '/auth/pos/login',
      remoteAddress,
      ...json({ email: 'ana@example.com', password }),
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    });

  it('a burst of 500 parallel wrong guesses on two replicas yields at most the configured number of 401s', async () => {
    const ledger = new MemoryAttemptLedger(new ManualClock(Date.UTC(2026, 0, 1)));
    const replicas = await Promise.all([
      testApp({ accountFailuresPerHour: LIMIT, attemptLedger: ledger }),
      testApp({ accountFailuresPerHour: LIMIT, attemptLedger: ledger }),
    ]);
    try {
      // From 500 addresses (a botnet): the account's shared budget holds.
      const many = await Promise.all(
        Array.from({ length: 500 }, (_, i) => guess(replicas[i % 2]!.app, `198.51.${i >> 8}.${i & 255}`)),
      );
      const codes = many.map((r) => r.statusCode);
      expect(codes.filter((c) => c === 401).length).toBeLessThanOrEqual(LIMIT);
      expect(codes.filter((c) => c === 401).length).toBeGreaterThan(LIMIT / 2);
      expect(codes.filter((c) => c !== 401 && c !== 429)).toEqual([]);
    } finally {
      await Promise.all(replicas.map((r) => r.app.close()));
    }
  });

  it('a burst of 500 from one address gets the free failures, then growing delays', async () => {
    // A share of verifications above the free failures, so that the growing delays are what stops the burst.
    const t = await testApp({
      accountFailuresPerHour: LIMIT,
      sourceFreeFailures: 5,
      verificationLimits: { perClient: 10 },
    });
    try {
      const codes = (await Promise.all(Array.from({ length: 500 }, () => guess(t.app, '203.0.113.5')))).map(
        (r) => r.statusCode,
      );
      expect(codes.filter((c) => c === 401)).toHaveLength(5);
      const next = await guess(t.app, '203.0.113.5');
      expect(next.statusCode).toBe(429);
      expect(Number(next.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // the same account from another address is not delayed by this one
      expect((await guess(t.app, '203.0.113.6', PASSWORD)).statusCode).toBe(200);
    } finally {
      await t.app.close();
    }
  });

  it('the victim still signs in from a client that signed in before, while unknown clients are refused', async () => {
    const t = await testApp({ accountFailuresPerHour: LIMIT });
    try {
      const before = await guess(t.app, '192.0.2.10', PASSWORD);
      expect(before.statusCode).toBe(200);
      const setCookie = String(before.headers['set-cookie']);
      expect(setCookie).toMatch(
        /^eo_device_[\w-]+=[\w.-]+; Path=\/auth; Max-Age=\d+; HttpOnly; Secure; SameSite=Strict$/,
      );
      const cookie = setCookie.split(';')[0]!;

      await Promise.all(Array.from({ length: 500 }, (_, i) => guess(t.app, `198.51.100.${i & 255}`)));
      // the right password from a new client: refused until the window passes (no oracle for the attacker either)
      expect((await guess(t.app, '192.0.2.99', PASSWORD)).statusCode).toBe(429);
      // the till that signed in before, from the same or another address, still gets in
      expect((await guess(t.app, '192.0.2.10', PASSWORD, cookie)).statusCode).toBe(200);
      expect((await guess(t.app, '192.0.2.11', PASSWORD, cookie)).statusCode).toBe(200);
      // a device token is for its account only
      const other = await t.app.inject({
        method: 'POST',
        url: '/auth/pos/login',
        remoteAddress: '192.0.2.10',
        ...json({ email: 'bruno@example.com', password: 'wrong' }),
        headers: { 'content-type': 'application/json', cookie },
      });
      expect(other.statusCode).toBe(401);
    } finally {
      await t.app.close();
    }
  });

  it('a device token that fails too often is locked out and counts as an unknown client', async () => {
    const t = await testApp({ accountFailuresPerHour: 2, deviceFailuresPerHour: 3, sourceFreeFailures: 100 });
    try {
      const cookie = String((await guess(t.app, '192.0.2.10', PASSWORD)).headers['set-cookie']).split(';')[0]!;
      const tries = await Promise.all(Array.from({ length: 10 }, () => guess(t.app, '192.0.2.10', 'wrong', cookie)));
      // 3 on the device token, then it counts as an unknown client: 2 more from the account's budget
      expect(tries.filter((r) => r.statusCode === 401)).toHaveLength(5);
      expect(tries.filter((r) => r.statusCode === 429)).toHaveLength(5);
      expect((await guess(t.app, '192.0.2.10', PASSWORD, cookie)).statusCode).toBe(429);
    } finally {
      await t.app.close();
    }
  });

  it('throttles per client address across accounts', async () => {
    const { app } = await testApp({ ipFailuresPerHour: 2 });
    const attempt = (email: string, password: string) =>
      app.inject({
        method: 'POST',
        url: '/auth/pos/login',
        remoteAddress: '203.0.113.9',
        ...json({ email, password }),
      });
    expect((await attempt('x1@example.com', 'a')).statusCode).toBe(401);
    expect((await attempt('x2@example.com', 'b')).statusCode).toBe(401);
    expect((await attempt('ana@example.com', PASSWORD)).statusCode).toBe(429);
    const other = await app.inject({
      method: 'POST',
      url: '/auth/pos/login',
      remoteAddress: '198.51.100.7',
      ...json({ email: 'ana@example.com', password: PASSWORD }),
    });
    expect(other.statusCode).toBe(200);
    await app.close();
  });

  it('answers 503, not 500 nor a verification, when the shared budget cannot be reached', async () => {
    const { app } = await testApp({ attemptLedger: { claim: () => Promise.reject(new Error('apiserver down')) } });
    const res = await app.inject({
      method: 'POST',
      url: '/auth/pos/login',
      ...json({ email: 'ana@example.com', password: PASSWORD }),
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().type).toBe('urn:endpoint-operator:signin:unavailable');
    await app.close();
  });
});
