/**
 * A bounded cache of review decisions, modelled on k8s.io/apiserver's cached_token_authenticator:
 * each entry lives for the TTL its loader chooses (success and failure differ), the least recently
 * used entry goes when the cap is reached, concurrent look-ups of one key share one load, and a load
 * that throws is never cached (a down apiserver must not become a cached "no").
 * Keys are computed by the caller (a keyed hash, keys.ts): the cache never holds a token.
 */
import type { Clock } from '../../runtime/clock.js';
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
  /** A Map iterates in insertion order: re-inserting on a hit makes the first key the least recently used. */
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V>>();

  constructor(private readonly options: DecisionCacheOptions) {}

  get size(): number {
    return this.entries.size;
  }

  /** `load` is given the value that just expired, if it was still held (a renewal rather than a stranger). */
  get(key: string, load: (expired: V | undefined) => Promise<Loaded<V>>): Promise<V> {
    const entry = this.entries.get(key);
    let expired: V | undefined;
    if (entry !== undefined) {
      if (entry.expiresAt > this.options.clock.now()) {
        this.entries.delete(key);
        this.entries.set(key, entry);
        authCacheRequests.inc({ cache: this.options.kind, result: 'hit' });
        return Promise.resolve(entry.value);
      }
      expired = entry.value;
      this.remove(key);
    }
    authCacheRequests.inc({ cache: this.options.kind, result: 'miss' });
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    const started = load(expired).then(
      (loaded) => {
        this.loading.delete(key);
        if (loaded.ttlMs > 0)
          this.put(key, { value: loaded.value, expiresAt: this.options.clock.now() + loaded.ttlMs });
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

  private put(key: string, entry: Entry<V>): void {
    if (this.entries.has(key)) this.remove(key);
    while (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.remove(oldest.value);
    }
    this.entries.set(key, entry);
    authCacheEntries.inc({ cache: this.options.kind });
  }

  private remove(key: string): void {
    if (this.entries.delete(key)) authCacheEntries.dec({ cache: this.options.kind });
  }
}
