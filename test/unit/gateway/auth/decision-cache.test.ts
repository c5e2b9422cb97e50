import { describe, expect, it } from 'vitest';
import { DecisionCache } from '../../../../src/gateway/auth/decision-cache.js';

function make(maxEntries = 3) {
  let now = 0;
  const cache = new DecisionCache<string>({ kind: 'token', maxEntries, clock: { now: () => now } });
  let loads = 0;
  const loader = (value: string, ttlMs: number) => async () => {
    loads++;
    return { value, ttlMs };
  };
  return { cache, loader, loads: () => loads, tick: (ms: number) => (now += ms) };
}

describe('DecisionCache', () => {
  it('serves a value for its TTL and loads again once it has passed', async () => {
    const { cache, loader, loads, tick } = make();
    expect(await cache.get('k', loader('a', 1000))).toBe('a');
    tick(999);
    expect(await cache.get('k', loader('b', 1000))).toBe('a');
    tick(1);
    expect(await cache.get('k', loader('b', 1000))).toBe('b');
    expect(loads()).toBe(2);
  });

  it('does not cache a value whose TTL is zero or less (a token already past its exp)', async () => {
    const { cache, loader, loads } = make();
    await cache.get('k', loader('a', 0));
    await cache.get('k', loader('a', -5));
    expect(loads()).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('never caches a failed load, and lets the next caller try again', async () => {
    const { cache, loader } = make();
    await expect(
      cache.get('k', async () => {
        throw new Error('apiserver down');
      }),
    ).rejects.toThrow('apiserver down');
    expect(cache.size).toBe(0);
    expect(await cache.get('k', loader('ok', 1000))).toBe('ok');
  });

  it('merges concurrent look-ups of one key into one load, failures included', async () => {
    const { cache } = make();
    let release!: (v: { value: string; ttlMs: number }) => void;
    let loads = 0;
    const slow = () => {
      loads++;
      return new Promise<{ value: string; ttlMs: number }>((r) => (release = r));
    };
    const all = Promise.all([cache.get('k', slow), cache.get('k', slow), cache.get('k', slow)]);
    release({ value: 'v', ttlMs: 1000 });
    expect(await all).toEqual(['v', 'v', 'v']);
    expect(loads).toBe(1);
    let fail!: (e: Error) => void;
    const failing = () => {
      loads++;
      return new Promise<{ value: string; ttlMs: number }>((_, j) => (fail = j));
    };
    const both = Promise.allSettled([cache.get('x', failing), cache.get('x', failing)]);
    fail(new Error('timeout'));
    expect((await both).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(loads).toBe(2);
  });

  it('evicts the least recently used entry at the cap', async () => {
    const { cache, loader, loads } = make(3);
    for (const k of ['a', 'b', 'c']) await cache.get(k, loader(k, 10_000));
    await cache.get('a', loader('a2', 10_000)); // a is now the most recent
    await cache.get('d', loader('d', 10_000)); // evicts b
    expect(cache.size).toBe(3);
    expect(await cache.get('a', loader('a3', 10_000))).toBe('a');
    expect(await cache.get('c', loader('c2', 10_000))).toBe('c');
    expect(await cache.get('b', loader('b2', 10_000))).toBe('b2');
    expect(loads()).toBe(5);
  });
});

describe('DecisionCache renewals', () => {
  it('hands the loader the value that just expired, and nothing for a stranger', async () => {
    let now = 0;
    const cache = new DecisionCache<string>({ kind: 'access', maxEntries: 10, clock: { now: () => now } });
    const seen: (string | undefined)[] = [];
    const load = (value: string) => async (expired: string | undefined) => {
      seen.push(expired);
      return { value, ttlMs: 100 };
    };
    await cache.get('k', load('a'));
    now += 100;
    await cache.get('k', load('b'));
    expect(seen).toEqual([undefined, 'a']);
  });
});
