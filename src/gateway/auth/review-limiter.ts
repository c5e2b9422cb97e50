/**
 * Bounds the reviews the gateway sends to the kube-apiserver: at most `maxInFlight` at once and
 * `perSecond` on average (a token bucket holding one second's worth). A flood of distinct invalid
 * tokens misses every cache; without this bound it would become a flood of TokenReviews. The excess
 * is refused at once (429 RESOURCE_EXHAUSTED), never queued: a queue would only delay the same refusal
 * and hold memory. Callers whose decision is cached never reach the limiter.
 */
import type { Clock } from '../../base/clock.js';

export class ReviewThrottledError extends Error {}

export interface ReviewLimiterOptions {
  readonly maxInFlight: number;
  readonly perSecond: number;
  readonly clock: Pick<Clock, 'now'>;
}

export class ReviewLimiter {
  private inFlight = 0;
  private tokens: number;
  private refilledAt: number;

  constructor(private readonly options: ReviewLimiterOptions) {
    this.tokens = options.perSecond;
    this.refilledAt = options.clock.now();
  }

  /**
   * `renewal`: the review re-checks a decision that was positive until its TTL ran out. Renewals pass
   * without taking from the budget (still counted in flight): their number is bounded by the cache
   * (entries / TTL), and refusing them would let a storm of strangers lock out the callers it already knows.
   */
  async run<T>(review: () => Promise<T>, renewal = false): Promise<T> {
    if (renewal) return this.admitted(review);
    const now = this.options.clock.now();
    this.tokens = Math.min(
      this.options.perSecond,
      this.tokens + ((now - this.refilledAt) / 1000) * this.options.perSecond,
    );
    this.refilledAt = now;
    if (this.inFlight >= this.options.maxInFlight)
      throw new ReviewThrottledError(`${this.options.maxInFlight} reviews are already in flight at the kube-apiserver`);
    if (this.tokens < 1)
      throw new ReviewThrottledError(
        `more than ${this.options.perSecond} reviews per second would be sent to the kube-apiserver`,
      );
    this.tokens -= 1;
    return this.admitted(review);
  }

  private async admitted<T>(review: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await review();
    } finally {
      this.inFlight--;
    }
  }
}
