/**
 * Password verifications (argon2id, tens of milliseconds of a core each, for unknown emails too, so
 * that timing does not tell which accounts exist) with bounded concurrency and a fair share per
 * client. Without it, 500 logins from one address queued 500 hashes on libuv's pool and every other
 * client waited behind them (6 s) or hit 429 from the per-account limits.
 *
 * - At most `concurrency` verifications run at once (about the number of cores);
 * - each client (its address, or its device token when it has a valid one for the account: a till
 *   that signed in before is not held back by a neighbour behind the same NAT) may have at most
 *   `perClient` verifications running or queued; one more is refused at once, before any hashing,
 *   with a Retry-After;
 * - the queue holds at most `queueLength` verifications in all (another 429 when full);
 * - one client runs at most `concurrency − 1` verifications at once (1 on one core): a slot stays
 *   free for someone else, so another client's login starts its verification as soon as it arrives
 *   instead of waiting for one of the flood's to end (B5-flood measures the other address's wait, in
 *   bench/results.json);
 * - waiting verifications run round-robin between clients, so a newcomer waits for at most one
 *   verification of each other client, however many each has queued.
 */
import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '../base/metrics.js';

export interface VerificationLimits {
  readonly concurrency: number;
  readonly perClient: number;
  readonly queueLength: number;
}

export const DEFAULT_VERIFICATION_LIMITS: VerificationLimits = { concurrency: 2, perClient: 4, queueLength: 256 };

const signinVerificationsRefused = new Counter({
  name: 'endpoint_operator_signin_verifications_refused_total',
  help: 'Sign-in attempts answered 429 before any hashing because their client had its share of password verifications in flight (client) or the queue was full (queue).',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

const signinVerificationsQueued = new Gauge({
  name: 'endpoint_operator_signin_verifications_queued',
  help: 'Password verifications waiting for a slot.',
  registers: [metricsRegistry],
});

/** An admitted verification: run it once (or cancel it when the attempt ends before). */
export interface VerificationTicket {
  run<T>(verify: () => Promise<T>): Promise<T>;
  cancel(): void;
}

export type VerificationAdmission =
  | { readonly admitted: true; readonly ticket: VerificationTicket }
  | { readonly admitted: false; readonly retryAfterSeconds: number; readonly reason: 'client' | 'queue' };

export class VerificationQueue {
  private running = 0;
  private queued = 0;
  /** Per client: verifications admitted and not finished (running or queued). */
  private readonly admitted = new Map<string, number>();
  /** Per client: verifications running. */
  private readonly runningOf = new Map<string, number>();
  /** Per client with waiting verifications: their starts, in arrival order. */
  private readonly waiting = new Map<string, (() => void)[]>();
  /** Clients with waiting verifications, in round-robin order. */
  private readonly turn: string[] = [];
  private readonly refusedForShare = signinVerificationsRefused.labels({ reason: 'client' });
  /** The most one client runs at once: all slots but one, so another client never waits for a free one. */
  private readonly perClientRunning: number;

  constructor(private readonly limits: VerificationLimits = DEFAULT_VERIFICATION_LIMITS) {
    this.perClientRunning = Math.max(1, limits.concurrency - 1);
  }

  /** Whether `client` already holds its whole share (checked before the body is read, to refuse a flood cheaply). */
  isOverShare(client: string): boolean {
    return (this.admitted.get(client) ?? 0) >= this.limits.perClient;
  }

  /** `isOverShare`, counted as a refusal when true: for callers that answer 429 themselves, before `admit`. */
  refuseOverShare(client: string): boolean {
    if (!this.isOverShare(client)) return false;
    this.refusedForShare.inc();
    return true;
  }

  admit(client: string): VerificationAdmission {
    const mine = this.admitted.get(client) ?? 0;
    if (mine >= this.limits.perClient) {
      this.refusedForShare.inc();
      return { admitted: false, retryAfterSeconds: 1, reason: 'client' };
    }
    if (this.queued >= this.limits.queueLength && !this.mayStartNow(client)) {
      signinVerificationsRefused.inc({ reason: 'queue' });
      return { admitted: false, retryAfterSeconds: 1, reason: 'queue' };
    }
    this.admitted.set(client, mine + 1);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      decrement(this.admitted, client);
    };
    return {
      admitted: true,
      ticket: {
        run: async <T>(verify: () => Promise<T>): Promise<T> => {
          await this.slot(client);
          try {
            return await verify();
          } finally {
            finish();
            this.running--;
            decrement(this.runningOf, client);
            this.next();
          }
        },
        cancel: finish,
      },
    };
  }

  /** Resolves when this client's verification may start (a running slot is then held). */
  private slot(client: string): Promise<void> {
    if (this.mayStartNow(client)) {
      this.start(client);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let list = this.waiting.get(client);
      if (list === undefined) {
        list = [];
        this.waiting.set(client, list);
        this.turn.push(client);
      }
      list.push(resolve);
      this.queued++;
      signinVerificationsQueued.set(this.queued);
    });
  }

  /**
   * After next(), a client with waiting verifications is one that may not start more: a client with
   * nothing waiting may start at once when a slot is free and it is under its own limit.
   */
  private mayStartNow(client: string): boolean {
    return this.running < this.limits.concurrency && !this.waiting.has(client) && this.mayStart(client);
  }

  private mayStart(client: string): boolean {
    return (this.runningOf.get(client) ?? 0) < this.perClientRunning;
  }

  private start(client: string): void {
    this.running++;
    this.runningOf.set(client, (this.runningOf.get(client) ?? 0) + 1);
  }

  /** Starts waiting verifications while slots are free: the first client in turn that may run goes, then to the back. */
  private next(): void {
    while (this.running < this.limits.concurrency) {
      const at = this.turn.findIndex((client) => this.mayStart(client));
      if (at < 0) return;
      const [client] = this.turn.splice(at, 1) as [string];
      const list = this.waiting.get(client) ?? [];
      const resume = list.shift();
      if (list.length > 0) this.turn.push(client);
      else this.waiting.delete(client);
      if (resume === undefined) continue;
      this.queued--;
      signinVerificationsQueued.set(this.queued);
      this.start(client);
      resume();
    }
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
