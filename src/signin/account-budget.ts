import type { Clock } from '../base/clock.js';
import { admittedOnce, type Admission } from './throttle.js';

/** The window of the per-account budget. */
export const ATTEMPT_WINDOW_MS = 3_600_000;

export interface Claim {
  /** Attempts granted (0 when the account's budget for the window is spent). */
  readonly granted: number;
  /** When the current window ends (ms since the epoch); its budget is fresh afterwards. */
  readonly windowEndsAt: number;
}

/**
 * Where the per-account attempt budget is kept for every replica. A claim takes up to `want`
 * attempts from the account's budget of `limit` per window, atomically, so however the replicas
 * interleave, the attempts granted in a window never exceed `limit`.
 */
export interface AttemptLedger {
  claim(accountKey: string, want: number, limit: number, windowMs: number): Promise<Claim>;
}

/** The ledger of one process (tests, and a single replica without Kubernetes). */
export class MemoryAttemptLedger implements AttemptLedger {
  private readonly windows = new Map<string, { start: number; claimed: number }>();
  constructor(private readonly clock: Clock) {}

  async claim(accountKey: string, want: number, limit: number, windowMs: number): Promise<Claim> {
    const now = this.clock.now();
    let w = this.windows.get(accountKey);
    if (!w || now >= w.start + windowMs) this.windows.set(accountKey, (w = { start: now, claimed: 0 }));
    const granted = Math.max(0, Math.min(want, limit - w.claimed));
    w.claimed += granted;
    return { granted, windowEndsAt: w.start + windowMs };
  }
}

interface Pool {
  slots: number;
  windowEndsAt: number;
  exhausted: boolean;
  claiming: Promise<void> | undefined;
}

/**
 * The per-account limit on attempts from clients without a device token, shared by replicas through
 * an AttemptLedger. Each replica claims attempts in blocks (one ledger write per block, so an attack
 * of `limit` guesses costs about ten writes) and keeps unused ones in a local pool. An attempt takes
 * one before its password is verified; a success gives it back to the pool (it was no failure), a
 * failure spends it. So the failures in a window, on all replicas together, never exceed `limit`,
 * whatever the burst: unused claimed attempts only make the real limit lower.
 */
export class AccountBudget {
  private readonly pools = new Map<string, Pool>();
  private readonly block: number;

  constructor(
    private readonly ledger: AttemptLedger,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
    private readonly maxAccounts = 100_000,
  ) {
    this.block = Math.max(1, Math.ceil(limit / 10));
  }

  async admit(accountKey: string): Promise<Admission> {
    for (;;) {
      const pool = this.pool(accountKey);
      const now = this.clock.now();
      if (pool.windowEndsAt <= now && pool.claiming === undefined) {
        pool.slots = 0;
        pool.exhausted = false;
      }
      if (pool.slots > 0) {
        pool.slots--;
        const window = pool.windowEndsAt;
        return admittedOnce((failed) => {
          if (!failed && pool.windowEndsAt === window && this.clock.now() < window) pool.slots++;
        });
      }
      if (pool.exhausted)
        return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((pool.windowEndsAt - now) / 1000)) };
      if (pool.claiming === undefined) {
        pool.claiming = this.ledger
          .claim(accountKey, this.block, this.limit, this.windowMs)
          .then((c) => {
            pool.slots += c.granted;
            pool.windowEndsAt = c.windowEndsAt;
            pool.exhausted = c.granted === 0;
          })
          .finally(() => {
            pool.claiming = undefined;
          });
      }
      await pool.claiming;
    }
  }

  private pool(accountKey: string): Pool {
    let pool = this.pools.get(accountKey);
    if (!pool) {
      pool = { slots: 0, windowEndsAt: 0, exhausted: false, claiming: undefined };
      this.pools.set(accountKey, pool);
      if (this.pools.size > this.maxAccounts) {
        // Dropping a pool only wastes its claimed attempts: the limit can only get stricter.
        for (const [key, p] of this.pools) {
          if (p.claiming === undefined && key !== accountKey) {
            this.pools.delete(key);
            break;
          }
        }
      }
    }
    return pool;
  }
}
