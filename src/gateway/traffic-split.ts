/**
 * Which deployed model serves the next call of an endpoint: the traffic split honoured exactly, not
 * only on average. Smooth weighted round-robin (nginx's algorithm, as in `ngx_http_upstream_round_robin`)
 * spreads each model's picks evenly: the sequence of picks repeats with period Σweights, and every
 * period holds exactly `weight` picks of each model. With the split's weights summing to 100, any
 * 100 consecutive picks therefore hold exactly each model's percentage (Vertex AI itself picks at
 * random, which is only right on average).
 *
 * Sticky experiments: a request carrying a sticky key is pinned by a hash of the key onto the
 * split's cumulative ranges, so the same key reaches the same model on every gateway replica, with
 * no shared state, for as long as the split is unchanged. Pinned requests do not advance the
 * round-robin, so the unpinned traffic keeps its exact proportions.
 */

/** One entry of the split: a deployed-model id and its percentage. Ids with weight 0 get nothing. */
export type SplitEntry = readonly [id: string, weight: number];

/** The split's entries that receive traffic, in a canonical order (by id), so every replica agrees. */
export function activeEntries(split: Readonly<Record<string, unknown>>): SplitEntry[] {
  const out: SplitEntry[] = [];
  for (const [id, weight] of Object.entries(split)) {
    if (typeof weight === 'number' && Number.isInteger(weight) && weight > 0) out.push([id, weight]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** A string that changes whenever the split does: state (round-robin position) is kept per signature. */
export function splitSignature(entries: readonly SplitEntry[]): string {
  return entries.map(([id, w]) => `${id}=${w}`).join(',');
}

export class SmoothWeightedRoundRobin {
  private readonly ids: string[];
  private readonly weights: number[];
  private readonly current: number[];
  private readonly total: number;

  constructor(entries: readonly SplitEntry[]) {
    this.ids = entries.map(([id]) => id);
    this.weights = entries.map(([, w]) => w);
    this.current = entries.map(() => 0);
    this.total = this.weights.reduce((a, b) => a + b, 0);
  }

  /** The next id, or `undefined` for an empty split. */
  next(): string | undefined {
    let best = -1;
    for (let i = 0; i < this.ids.length; i++) {
      this.current[i] = (this.current[i] ?? 0) + (this.weights[i] ?? 0);
      if (best < 0 || (this.current[i] ?? 0) > (this.current[best] ?? 0)) best = i;
    }
    if (best < 0) return undefined;
    this.current[best] = (this.current[best] ?? 0) - this.total;
    return this.ids[best];
  }
}

/** FNV-1a, 32 bit: cheap, stable across processes and versions (unlike a seeded hash). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The id a sticky key is pinned to under this split: the key's hash on the split's cumulative ranges. */
export function stickyPick(entries: readonly SplitEntry[], key: string): string | undefined {
  const total = entries.reduce((a, [, w]) => a + w, 0);
  if (total <= 0) return undefined;
  let point = fnv1a(key) % total;
  for (const [id, weight] of entries) {
    if (point < weight) return id;
    point -= weight;
  }
  return undefined;
}

/**
 * Round-robin state per endpoint, reset when the endpoint's split changes. Keyed by the endpoint's
 * resource name: a few numbers per endpoint ever called.
 */
export class TrafficSplitter {
  private readonly states = new Map<string, { signature: string; rr: SmoothWeightedRoundRobin }>();

  pick(endpoint: string, entries: readonly SplitEntry[], signature: string, stickyKey?: string): string | undefined {
    if (stickyKey !== undefined && stickyKey !== '') return stickyPick(entries, stickyKey);
    let state = this.states.get(endpoint);
    if (state === undefined || state.signature !== signature) {
      state = { signature, rr: new SmoothWeightedRoundRobin(entries) };
      this.states.set(endpoint, state);
    }
    return state.rr.next();
  }
}
