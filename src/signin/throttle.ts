import type { Clock } from '../base/clock.js';

/** An attempt admitted before verification; settled once the answer is known. */
export interface Reservation {
  /** `failed`: the attempt counts as a failure; otherwise its place is given back. */
  settle(failed: boolean): void;
}

export type Admission =
  | { readonly admitted: true; readonly reservation: Reservation }
  | { readonly admitted: false; readonly retryAfterSeconds: number };

/** An admission whose reservation settles at most once: a second settle (a retry, a double finally) counts nothing. */
export function admittedOnce(settle: (failed: boolean) => void): Admission {
  let settled = false;
  return {
    admitted: true,
    reservation: {
      settle: (failed) => {
        if (settled) return;
        settled = true;
        settle(failed);
      },
    },
  };
}

/**
 * Failures per key in a sliding window, counted BEFORE verification: an attempt takes a place
 * (`admit`) while its password is verified, so however many arrive at once, at most `limit` can be
 * in flight or failed in the window. A success gives its place back. Memory is bounded (at most
 * `limit` times per key, `maxKeys` keys, least recently failed evicted first). Per process: used for
 * per-address and per-device limits; the per-account limit is shared by replicas (account-budget.ts).
 */
export class FailureWindow {
  private readonly failures = new Map<string, number[]>();
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
    private readonly maxKeys = 100_000,
  ) {}

  admit(key: string): Admission {
    const log = this.prune(key) ?? [];
    const pending = this.inFlight.get(key) ?? 0;
    if (log.length + pending >= this.limit) {
      const oldest = log[0];
      const wait = oldest === undefined ? 1 : Math.ceil((oldest + this.windowMs - this.clock.now()) / 1000);
      return { admitted: false, retryAfterSeconds: Math.max(1, wait) };
    }
    this.inFlight.set(key, pending + 1);
    return admittedOnce((failed) => {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
      if (failed) this.recordFailure(key);
    });
  }

  /** Forgets the key's failures (after a success, for limits that reset on success). */
  reset(key: string): void {
    this.failures.delete(key);
  }

  private recordFailure(key: string): void {
    const log = this.prune(key) ?? [];
    log.push(this.clock.now());
    if (log.length > this.limit) log.splice(0, log.length - this.limit);
    // Re-inserting moves the key to the end of the Map's order: eviction is least-recently-failed first.
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

export interface GrowingDelayOptions {
  /** Failures allowed before delays start (default 5). */
  readonly freeFailures?: number;
  /** The first delay (default 1 s); each further failure doubles it. */
  readonly baseDelayMs?: number;
  /** The longest delay (default 15 minutes); also how long a key is remembered after its last failure. */
  readonly maxDelayMs?: number;
  readonly maxKeys?: number;
}

interface DelayState {
  failures: number;
  inFlight: number;
  notBefore: number;
  lastFailure: number;
}

/**
 * OWASP's "increasing delays" for one key (an account seen from one client address): a few failures
 * are free, then each failure doubles the wait before the next attempt, and while delays apply only
 * one attempt may be in flight, so a parallel burst gets no more tries than a patient attacker.
 * A success clears the key. Per process.
 */
export class GrowingDelay {
  private readonly states = new Map<string, DelayState>();
  private readonly free: number;
  private readonly base: number;
  private readonly max: number;
  private readonly maxKeys: number;

  constructor(
    private readonly clock: Clock,
    options: GrowingDelayOptions = {},
  ) {
    this.free = options.freeFailures ?? 5;
    this.base = options.baseDelayMs ?? 1000;
    this.max = options.maxDelayMs ?? 15 * 60_000;
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  admit(key: string): Admission {
    const now = this.clock.now();
    let s = this.states.get(key);
    if (s && s.inFlight === 0 && now - s.lastFailure > this.max) {
      this.states.delete(key);
      s = undefined;
    }
    if (!s) {
      s = { failures: 0, inFlight: 0, notBefore: 0, lastFailure: now };
      this.states.set(key, s);
      if (this.states.size > this.maxKeys) this.evictOne();
    }
    const delaying = s.failures + s.inFlight >= this.free;
    if (delaying && (s.inFlight > 0 || now < s.notBefore)) {
      return {
        admitted: false,
        retryAfterSeconds: Math.max(1, Math.ceil((Math.max(s.notBefore, now + this.base) - now) / 1000)),
      };
    }
    s.inFlight++;
    const state = s;
    return admittedOnce((failed) => {
      state.inFlight--;
      if (!failed) {
        if (state.inFlight === 0 && state.failures === 0) this.states.delete(key);
        return;
      }
      state.failures++;
      state.lastFailure = this.clock.now();
      const over = state.failures - this.free;
      if (over >= 0) state.notBefore = state.lastFailure + Math.min(this.max, this.base * 2 ** Math.min(over, 30));
    });
  }

  /** A success from this key: its failures are forgotten. */
  reset(key: string): void {
    const s = this.states.get(key);
    if (s && s.inFlight === 0) this.states.delete(key);
    else if (s) {
      s.failures = 0;
      s.notBefore = 0;
    }
  }

  private evictOne(): void {
    for (const [key, s] of this.states) {
      if (s.inFlight === 0) {
        this.states.delete(key);
        return;
      }
    }
  }
}
