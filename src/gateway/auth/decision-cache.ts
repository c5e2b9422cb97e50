/**
 * A bounded cache of review decisions, modelled on k8s.io/apiserver's cached_token_authenticator:
 * each entry lives for the TTL its loader chooses (success and failure differ), the least recently
 * used entry goes when the cap is reached (lru-cache), concurrent look-ups of one key share one load,
 * and a load that throws is never cached (a down apiserver must not become a cached "no").
 * Keys are computed by the caller (a keyed hash, keys.ts): the cache never holds a token.
 *
 * The expiry is kept in the entry, not in lru-cache's `ttl`: that one serves an entry at its exact
 * expiry, treats a start at clock 0 and a TTL of 0 as "forever", and could not hand a renewal the
 * expired value while merging loads.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../base/clock.js';
import { authCacheEntries, authCacheRequests, type ReviewKind } from './metrics.js';

export interface Loaded<V> {
  readonly value: V;
  /** How long the value may be served; ≤ 0 = not cached. */
  readonly ttlMs: number;
}

export interface DecisionCacheOptions {
  readonly kind: ReviewKind;
  readonly maxEntries: number;
  readonly clock: Pick<Clock, 'now'>;
}

interface Entry<V> {
  readonly value: V;
  readonly expiresAt: number;
}

export class DecisionCache<V> {
  private readonly entries: LRUCache<string, Entry<V>>;
  private readonly loading = new Map<string, Promise<V>>();

  constructor(private readonly options: DecisionCacheOptions) {
    const labels = { cache: options.kind };
    this.entries = new LRUCache({
      max: options.maxEntries,
      // Every entry is a new object, so a replaced one is disposed and inserted: the gauge stays exact.
      onInsert: () => authCacheEntries.inc(labels),
      dispose: () => authCacheEntries.dec(labels),
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** `load` is given the value that just expired, if it was still held (a renewal rather than a stranger). */
  get(key: string, load: (expired: V | undefined) => Promise<Loaded<V>>): Promise<V> {
    const entry = this.entries.get(key);
    let expired: V | undefined;
    if (entry !== undefined) {
      if (entry.expiresAt > this.options.clock.now()) {
        authCacheRequests.inc({ cache: this.options.kind, result: 'hit' });
        return Promise.resolve(entry.value);
      }
      expired = entry.value;
      this.entries.delete(key);
    }
    authCacheRequests.inc({ cache: this.options.kind, result: 'miss' });
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    const started = load(expired).then(
      (loaded) => {
        this.loading.delete(key);
        if (loaded.ttlMs > 0)
          this.entries.set(key, { value: loaded.value, expiresAt: this.options.clock.now() + loaded.ttlMs });
        return loaded.value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, started);
    return started;
  }
}
