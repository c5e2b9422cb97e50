/**
 * Judging "no growth trend" of a heap series. Pure, so it is unit-tested.
 *
 * Heap in use between GCs is a sawtooth: a sample says as much about when the last collection ran as
 * about what is retained. Two series avoid that:
 * - the live heap after a forced full GC (the heap probe): the retained set itself, with little noise;
 *   the trend is judged on this one;
 * - for cross-checking with what /metrics shows in production: the lowest unforced sample per window
 *   (the floor the collector brought the heap down to in that window).
 * A least-squares line through the series gives a slope; the growth it projects over the whole churn
 * is compared with a threshold (see growthThresholdBytes).
 */

export interface Point {
  /** Seconds since the start of the churn. */
  readonly t: number;
  readonly bytes: number;
}

export interface Fit {
  /** Bytes per second. */
  readonly slope: number;
  /** Bytes at t = 0. */
  readonly intercept: number;
  /** Standard deviation of the points around the line, in bytes. */
  readonly residualStd: number;
  readonly points: number;
}

export function leastSquares(points: readonly Point[]): Fit {
  const n = points.length;
  if (n < 2) throw new Error(`a trend needs at least two points, got ${n}`);
  const meanT = points.reduce((s, p) => s + p.t, 0) / n;
  const meanB = points.reduce((s, p) => s + p.bytes, 0) / n;
  let sTT = 0;
  let sTB = 0;
  for (const p of points) {
    sTT += (p.t - meanT) ** 2;
    sTB += (p.t - meanT) * (p.bytes - meanB);
  }
  if (sTT === 0) throw new Error('a trend needs points at two different times at least');
  const slope = sTB / sTT;
  const intercept = meanB - slope * meanT;
  const squared = points.reduce((s, p) => s + (p.bytes - (intercept + slope * p.t)) ** 2, 0);
  return { slope, intercept, residualStd: Math.sqrt(squared / Math.max(1, n - 2)), points: n };
}

/** The lowest sample in each window of `windowSeconds` (windows without samples are skipped), at the window's middle. */
export function windowFloors(samples: readonly Point[], windowSeconds: number): Point[] {
  const floors = new Map<number, number>();
  for (const s of samples) {
    const w = Math.floor(s.t / windowSeconds);
    floors.set(w, Math.min(floors.get(w) ?? Infinity, s.bytes));
  }
  return [...floors].sort(([a], [b]) => a - b).map(([w, bytes]) => ({ t: (w + 0.5) * windowSeconds, bytes }));
}

/**
 * How much projected growth over the churn still counts as "no growth trend": 2 % of the live heap
 * at the start, but at least 2 MB. Below that, what moves the live heap is in-flight work (queued
 * keys, objects being created and deleted, responses being parsed) and V8's own bookkeeping, not
 * retention; above it, at the default churn (6,000 actions in 10 minutes), a leak of a few hundred
 * bytes per action already fails.
 */
export function growthThresholdBytes(startLiveBytes: number): number {
  return Math.max(2e6, 0.02 * startLiveBytes);
}

export interface TrendVerdict {
  readonly fit: Fit;
  /** slope × churn duration. */
  readonly projectedGrowthBytes: number;
  readonly thresholdBytes: number;
  readonly pass: boolean;
}

export function judgeTrend(points: readonly Point[], durationSeconds: number): TrendVerdict {
  const fit = leastSquares(points);
  const first = points[0];
  if (!first) throw new Error('no points');
  const projectedGrowthBytes = fit.slope * durationSeconds;
  const thresholdBytes = growthThresholdBytes(first.bytes);
  return { fit, projectedGrowthBytes, thresholdBytes, pass: projectedGrowthBytes <= thresholdBytes };
}
