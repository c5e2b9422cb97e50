/**
 * Per-caller fairness of the prediction calls: each caller may have at most `maxInFlight` calls in
 * flight (body being read, model server being called, answer being written); one more is answered
 * at once with 429 RESOURCE_EXHAUSTED, as a Vertex AI quota answers, before its body is read. One
 * caller's burst or large bodies then take at most that share of the gateway from the others.
 *
 * The caller is `fairnessKeyOf(req)`: today the client address. With gateway authentication (a
 * `Caller` with a stable, non-reversible `key` per principal), that one function returns the
 * caller's key instead, so callers behind one proxy or NAT are told apart.
 */
import type { IncomingMessage } from 'node:http';
import { Counter } from 'prom-client';
import { metricsRegistry } from '../runtime/metrics.js';
import { GoogleApiError } from './google-errors.js';

/** Default calls in flight per caller (`--max-calls-per-caller`). */
export const DEFAULT_MAX_CALLS_PER_CALLER = 64;

export const gatewayCallsThrottled = new Counter({
  name: 'endpoint_operator_gateway_calls_throttled_total',
  help: 'Prediction calls answered 429 RESOURCE_EXHAUSTED because their caller already had --max-calls-per-caller calls in flight.',
  registers: [metricsRegistry],
});

/** Who a call counts against. The merge with gateway authentication swaps this for the authenticated Caller's key. */
export function fairnessKeyOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

export class CallerLimiter {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly maxInFlight: number) {}

  /** A release function for an admitted call (call it once, when the call is answered), or the refusal. */
  acquire(key: string): (() => void) | GoogleApiError {
    const n = this.inFlight.get(key) ?? 0;
    if (n >= this.maxInFlight) {
      gatewayCallsThrottled.inc();
      return new GoogleApiError('RESOURCE_EXHAUSTED', `Too many concurrent calls from this caller: at most ${this.maxInFlight} calls in flight per caller; retry when one has been answered.`);
    }
    this.inFlight.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** Callers with a call in flight (memory is bounded by them: an idle caller has no entry). */
  get callers(): number {
    return this.inFlight.size;
  }
}
