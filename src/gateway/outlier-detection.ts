/**
 * Passive outlier detection (Envoy's outlier detection, reduced): endpoints that fail are ejected
 * from balancing for a while, learned from real traffic rather than from probes.
 * - A refused or timed-out connect, or a connection reset before its answer ended, ejects at once:
 *   the address has no listening server, or its server was killed or is going (a pod's process
 *   killed, OOM-killed, or stopping); the EndpointSlice says so only seconds later.
 * - Other gateway failures (an answer that timed out, a 502/503/504 from the server) eject after
 *   `consecutiveFailures` in a row; any success resets the count.
 * - The ejection lasts `baseEjectionMs` × the number of times the endpoint was ejected (capped),
 *   so a flapping endpoint stays out longer, and an endpoint returns on its own when the time is up.
 * - Never all: when every endpoint of a set is ejected, the caller balances over all of them (Envoy's
 *   panic mode), because refusing every call is worse than trying a possibly recovered server.
 */
export interface OutlierOptions {
  readonly consecutiveFailures?: number;
  readonly baseEjectionMs?: number;
  readonly maxEjectionMs?: number;
  readonly now?: () => number;
}

interface Health {
  failures: number;
  ejections: number;
  ejectedUntil: number;
}

/** connect: no connection could be made; reset: the connection was reset or closed under a call; gateway: a bad answer or none in time. */
export type FailureKind = 'connect' | 'reset' | 'gateway';

export class OutlierDetector {
  private readonly health = new Map<string, Health>();
  private readonly consecutiveFailures: number;
  private readonly baseEjectionMs: number;
  private readonly maxEjectionMs: number;
  private readonly now: () => number;
  /** Called when an endpoint is ejected (metrics, logs). */
  onEject: (key: string, untilMs: number) => void = () => undefined;

  constructor(options: OutlierOptions = {}) {
    this.consecutiveFailures = options.consecutiveFailures ?? 5;
    this.baseEjectionMs = options.baseEjectionMs ?? 5_000;
    this.maxEjectionMs = options.maxEjectionMs ?? 300_000;
    this.now = options.now ?? Date.now;
  }

  isEjected(key: string): boolean {
    const h = this.health.get(key);
    return h !== undefined && h.ejectedUntil > this.now();
  }

  success(key: string): void {
    const h = this.health.get(key);
    if (h === undefined) return;
    h.failures = 0;
    // Healthy for longer than the longest ejection: forget its history (keeps the map to recently failing endpoints).
    if (this.now() - h.ejectedUntil > this.maxEjectionMs) this.health.delete(key);
  }

  failure(key: string, kind: FailureKind): void {
    let h = this.health.get(key);
    if (h === undefined) this.health.set(key, (h = { failures: 0, ejections: 0, ejectedUntil: 0 }));
    h.failures++;
    const now = this.now();
    if (h.ejectedUntil > now) return;
    if (kind !== 'gateway' || h.failures >= this.consecutiveFailures) {
      h.ejections++;
      h.failures = 0;
      h.ejectedUntil = now + Math.min(this.baseEjectionMs * h.ejections, this.maxEjectionMs);
      this.onEject(key, h.ejectedUntil);
    }
  }
}
