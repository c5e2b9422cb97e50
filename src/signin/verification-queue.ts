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
 * - waiting verifications run round-robin between clients, so a newcomer waits for at most one
 *   verification of each other client, however many each has queued.
 */
import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '../runtime/metrics.js';

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

export type VerificationAdmission = { readonly admitted: true; readonly ticket: VerificationTicket } | { readonly admitted: false; readonly retryAfterSeconds: number; readonly reason: 'client' | 'queue' };

export class VerificationQueue {
  private running = 0;
  private queued = 0;
  /** Per client: verifications admitted and not finished (running or queued). */
  private readonly admitted = new Map<string, number>();
  /** Per client with waiting verifications: their starts, in arrival order. */
  private readonly waiting = new Map<string, (() => void)[]>();
  /** Clients with waiting verifications, in round-robin order. */
  private readonly turn: string[] = [];

  constructor(private readonly limits: VerificationLimits = DEFAULT_VERIFICATION_LIMITS) {}

  /** Whether `client` already holds its whole share (checked before the body is read, to refuse a flood cheaply). */
  isOverShare(client: string): boolean {
    return (this.admitted.get(client) ?? 0) >= this.limits.perClient;
  }

  admit(client: string): VerificationAdmission {
    const mine = this.admitted.get(client) ?? 0;
    if (mine >= this.limits.perClient) {
      signinVerificationsRefused.inc({ reason: 'client' });
      return { admitted: false, retryAfterSeconds: 1, reason: 'client' };
    }
    if (this.running >= this.limits.concurrency && this.queued >= this.limits.queueLength) {
      signinVerificationsRefused.inc({ reason: 'queue' });
      return { admitted: false, retryAfterSeconds: 1, reason: 'queue' };
    }
    this.admitted.set(client, mine + 1);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      const left = (this.admitted.get(client) ?? 1) - 1;
      if (left > 0) this.admitted.set(client, left);
      else this.admitted.delete(client);
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
            this.next();
          }
        },
        cancel: finish,
      },
    };
  }

  /** Resolves when this client's verification may start (a running slot is then held). */
  private slot(client: string): Promise<void> {
    if (this.running < this.limits.concurrency && this.queued === 0) {
      this.running++;
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

  private next(): void {
    while (this.running < this.limits.concurrency && this.turn.length > 0) {
      const client = this.turn.shift() as string;
      const list = this.waiting.get(client) ?? [];
      const start = list.shift();
      if (list.length > 0) this.turn.push(client);
      else this.waiting.delete(client);
      if (start === undefined) continue;
      this.queued--;
      signinVerificationsQueued.set(this.queued);
      this.running++;
      start();
    }
  }
}
