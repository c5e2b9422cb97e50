import type { Clock } from './clock.js';

export interface ThrottleDecision {
  readonly allowed: boolean;
  /** When not allowed: seconds until the oldest counted failure leaves the window. */
  readonly retryAfterSeconds: number;
}

/**
 * Counts failed sign-ins per key in a sliding window (a log of failure times, at most `limit` per
 * key, so memory is bounded) and refuses further attempts once `limit` failures are in the window.
 * Counts are per replica: N replicas allow at most N × limit, which still bounds online guessing.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
    private readonly maxKeys = 100_000,
  ) {}

  check(key: string): ThrottleDecision {
    const log = this.prune(key);
    if (!log || log.length < this.limit) return { allowed: true, retryAfterSeconds: 0 };
    const oldest = log[0] ?? this.clock.now();
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + this.windowMs - this.clock.now()) / 1000)) };
  }

  recordFailure(key: string): void {
    const log = this.prune(key) ?? [];
    log.push(this.clock.now());
    if (log.length > this.limit) log.splice(0, log.length - this.limit);
    // Re-inserting moves the key to the end of the Map's order, which makes eviction least-recently-failed first.
    this.failures.delete(key);
    this.failures.set(key, log);
    if (this.failures.size > this.maxKeys) {
      const first = this.failures.keys().next();
      if (!first.done) this.failures.delete(first.value);
    }
  }

  private prune(key: string): number[] | undefined {
    const log = this.failures.get(key);
    if (!log) return undefined;
    const cutoff = this.clock.now() - this.windowMs;
    let drop = 0;
    while (drop < log.length && (log[drop] ?? 0) <= cutoff) drop++;
    if (drop > 0) log.splice(0, drop);
    if (log.length === 0) {
      this.failures.delete(key);
      return undefined;
    }
    return log;
  }
}
