/**
 * Per-caller fairness of the prediction calls: each caller may have at most `maxInFlight` calls in
 * flight (body being read, model server being called, answer being written) and at most
 * `maxBytesInFlight` bytes of request bodies in them (a body counts its Content-Length, or the body
 * limit when it has none: chunked). One more is answered at once with 429 RESOURCE_EXHAUSTED, as a
 * Vertex AI quota answers, before its body is read. A burst of small calls meets the first bound,
 * large bodies the second: even with their JSON work on worker threads (json-worker-pool.ts), reading
 * and writing a 1.4 MB body is event-loop work, so a caller sending many at once delays every other
 * caller's calls.
 *
 * The caller is `fairnessKeyOf(client address, principal)`: the authenticated principal's stable, non-reversible
 * key (auth/keys.ts), so callers behind one proxy or NAT are told apart and one principal calling
 * from many pods shares one budget; with `--auth=none` there is no principal, so the client address.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Counter } from 'prom-client';
import { metricsRegistry } from '../base/metrics.js';
import type { Principal } from './auth/cached-reviewer.js';
import { GoogleApiError } from './google-errors.js';

/** Default calls in flight per caller (`--max-calls-per-caller`). */
export const DEFAULT_MAX_CALLS_PER_CALLER = 64;
/** Default request-body bytes in flight per caller (`--max-body-bytes-per-caller`): two bodies at the 1.5 MB limit. */
export const DEFAULT_MAX_BODY_BYTES_PER_CALLER = 3_000_000;

export const gatewayCallsThrottled = new Counter({
  name: 'endpoint_operator_gateway_calls_throttled_total',
  help: 'Prediction calls answered 429 RESOURCE_EXHAUSTED because their caller already had --max-calls-per-caller calls or --max-body-bytes-per-caller body bytes in flight.',
  registers: [metricsRegistry],
});

/** Who a call counts against: the authenticated principal, or (auth off) the client address. */
export function fairnessKeyOf(client: string | undefined, principal: Principal | undefined): string {
  return principal?.user !== undefined ? principal.key : `address:${client ?? 'unknown'}`;
}

/** What a call's body weighs against its caller's byte budget: its declared length, or the body limit when undeclared (chunked). */
export function bodyWeight(headers: IncomingHttpHeaders, bodyLimit: number): number {
  const declared = Number(headers['content-length']);
  return Number.isFinite(declared) && declared >= 0 ? Math.min(declared, bodyLimit) : bodyLimit;
}

/** How long at most a refusal that closes its connection waits for one of its caller's calls to end (`holdRefusal`). */
export const REFUSAL_HOLD_MS = 1000;
/** Refusals held at once per caller; beyond, they are answered at once. */
export const MAX_HELD_REFUSALS_PER_CALLER = 8;

interface CallerState {
  calls: number;
  bytes: number;
  /** Refusals waiting (holdRefusal), woken when one of the caller's calls ends. */
  readonly waiting: Set<() => void>;
}

export class CallerLimiter {
  private readonly inFlight = new Map<string, CallerState>();

  constructor(
    readonly maxInFlight: number,
    readonly maxBytesInFlight: number = DEFAULT_MAX_BODY_BYTES_PER_CALLER,
  ) {}

  /**
   * A release function for an admitted call of `bodyBytes` (call it once, when the call is answered),
   * or the refusal. A caller with nothing in flight is always admitted, whatever its body's size.
   */
  acquire(key: string, bodyBytes = 0): (() => void) | GoogleApiError {
    const now = this.inFlight.get(key) ?? { calls: 0, bytes: 0, waiting: new Set() };
    if (now.calls >= this.maxInFlight) {
      gatewayCallsThrottled.inc();
      return new GoogleApiError(
        'RESOURCE_EXHAUSTED',
        `Too many concurrent calls from this caller: at most ${this.maxInFlight} calls in flight per caller; retry when one has been answered.`,
      );
    }
    if (now.calls > 0 && now.bytes + bodyBytes > this.maxBytesInFlight) {
      gatewayCallsThrottled.inc();
      return new GoogleApiError(
        'RESOURCE_EXHAUSTED',
        `Too many request bytes in flight from this caller: at most ${this.maxBytesInFlight} bytes of bodies in flight per caller; retry when a call has been answered.`,
      );
    }
    now.calls++;
    now.bytes += bodyBytes;
    this.inFlight.set(key, now);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      now.calls--;
      now.bytes -= bodyBytes;
      if (now.calls === 0) this.inFlight.delete(key);
      for (const wake of now.waiting) wake();
    };
  }

  /**
   * Resolves when one of `key`'s calls in flight ends, or after `maxMs`; at once when the caller has
   * nothing in flight or already has MAX_HELD_REFUSALS_PER_CALLER refusals waiting. For a refusal that
   * closes its connection (its large body is left unread, unread-body.ts): a client that ignores the
   * 429 and sends again at once costs the gateway a new connection per try, so a full-speed loop turns
   * refusals into the gateway's main work, slowing every other caller. Held, its next try comes when a call of its own has ended (and may
   * then be admitted), at most `maxMs` later. The socket meanwhile is not read: the body waits in TCP.
   */
  holdRefusal(key: string, maxMs = REFUSAL_HOLD_MS): Promise<void> {
    const now = this.inFlight.get(key);
    if (now === undefined || now.waiting.size >= MAX_HELD_REFUSALS_PER_CALLER) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        now.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, maxMs);
      now.waiting.add(wake);
    });
  }

  /** Callers with a call in flight (memory is bounded by them: an idle caller has no entry). */
  get callers(): number {
    return this.inFlight.size;
  }
}
