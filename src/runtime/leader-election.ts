/**
 * Leader election on a coordination.k8s.io/v1 Lease, following client-go's leaderelection:
 * - a replica takes the lease when it is absent, released (empty holder) or not renewed for
 *   `leaseDuration` as measured on OUR clock since we last saw the record change (never by
 *   comparing the holder's renewTime with our time: clocks of two nodes are not comparable);
 * - the leader renews every `retryPeriod` and gives up leadership when it could not renew for
 *   `renewDeadline` (< leaseDuration, so it stops before anyone else may start);
 * - on shutdown the leader writes an empty holder so another replica takes over at once
 *   instead of waiting out the lease (client-go's ReleaseOnCancel).
 * Writes are PUTs carrying the read resourceVersion, so two candidates cannot both win.
 */
import { isAlreadyExists, isConflict } from '../kube/api-error.js';
import { realClock, sleep, type Clock } from '../base/clock.js';
import type { KubeClient } from '../kube/kube-client.js';
import { coreResources, type KubeObject } from '../api/common/kube-object.js';
import { silentLogger, type Logger } from '../base/logger.js';
import { leaderStatus } from '../base/metrics.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** The calls the elector makes (a KubeClient; unit tests pass an in-memory lease store). */
export type LeaseClient = Pick<KubeClient, 'get' | 'create' | 'replace'>;

export interface LeaderElectorOptions {
  readonly client: LeaseClient;
  readonly namespace: string;
  /** Lease name, e.g. `endpoint-operator-leader`. */
  readonly name: string;
  /** Unique per replica (pod name + random suffix). */
  readonly identity: string;
  readonly leaseDurationSeconds?: number;
  readonly renewDeadlineSeconds?: number;
  readonly retryPeriodSeconds?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly random?: () => number;
}

export interface LeaderCallbacks {
  /** Called once leadership is gained; `signal` aborts when it is lost or on shutdown. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once after leadership ended (lost or released). */
  onStoppedLeading?(): void;
  /** Called whenever a different holder is observed. */
  onNewLeader?(identity: string): void;
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  private observed: Lease | undefined;
  private observedRaw = '';
  private observedTime = 0;
  private leading = false;
  private lastLeader = '';

  constructor(private readonly options: LeaderElectorOptions) {
    this.leaseDurationMs = (options.leaseDurationSeconds ?? 15) * 1000;
    this.renewDeadlineMs = (options.renewDeadlineSeconds ?? 10) * 1000;
    this.retryPeriodMs = (options.retryPeriodSeconds ?? 2) * 1000;
    if (this.renewDeadlineMs >= this.leaseDurationMs)
      throw new Error('renewDeadline must be shorter than leaseDuration');
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child({
      lease: `${options.namespace}/${options.name}`,
      identity: options.identity,
    });
    this.random = options.random ?? Math.random;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen on the lease ('' when none). */
  get leader(): string {
    return this.observed?.spec?.holderIdentity ?? '';
  }

  /**
   * Campaigns until leading, leads until the lease is lost or `signal` aborts (then releases it),
   * and resolves. A replica that lost leadership should exit: its caches may be stale.
   */
  async run(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !(await this.tryAcquireOrRenew(callbacks))) {
      await sleep(this.clock, this.retryPeriodMs * (1 + 0.2 * this.random()), signal);
    }
    if (signal.aborted) return;
    this.setLeading(true);
    this.log.info('became leader');
    const leadership = new AbortController();
    const onAbort = (): void => leadership.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve()
      .then(() => callbacks.onStartedLeading(leadership.signal))
      .catch((err: unknown) =>
        this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'onStartedLeading failed'),
      );
    let lastRenew = this.clock.now();
    while (!signal.aborted) {
      await sleep(this.clock, this.retryPeriodMs, signal);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew(callbacks)) {
        lastRenew = this.clock.now();
        continue;
      }
      if (this.clock.now() - lastRenew >= this.renewDeadlineMs || !this.isHolder()) {
        this.log.warn('lost leadership');
        break;
      }
    }
    signal.removeEventListener('abort', onAbort);
    leadership.abort();
    if (signal.aborted) await this.release();
    this.setLeading(false);
    callbacks.onStoppedLeading?.();
  }

  /** Gives the lease up (empty holder) if we hold it; returns whether the lease is free of us. */
  async release(): Promise<boolean> {
    if (!this.isHolder() || !this.observed) return true;
    const now = microTime(this.clock.now());
    const lease: Lease = {
      ...this.observed,
      spec: {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: this.observed.spec?.leaseTransitions ?? 0,
      },
    };
    try {
      const updated = await this.options.client.replace<Lease>(
        coreResources.leases,
        this.options.namespace,
        this.options.name,
        lease,
      );
      this.observe(updated);
      this.log.info('released lease');
      return true;
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not release lease');
      return false;
    }
  }

  private isHolder(): boolean {
    return this.observed?.spec?.holderIdentity === this.options.identity;
  }

  private setLeading(v: boolean): void {
    this.leading = v;
    leaderStatus.set({ name: this.options.name }, v ? 1 : 0);
  }

  private observe(lease: Lease): void {
    const raw = JSON.stringify(lease.spec ?? {});
    if (raw !== this.observedRaw) {
      this.observedRaw = raw;
      this.observedTime = this.clock.now();
    }
    this.observed = lease;
  }

  private async tryAcquireOrRenew(callbacks: LeaderCallbacks): Promise<boolean> {
    // A hung request must not outlive the renew deadline: treat it as a failed attempt.
    let cancel = (): void => undefined;
    const timeout = new Promise<boolean>((resolve) => {
      cancel = this.clock.setTimer(this.renewDeadlineMs, () => resolve(false));
    });
    try {
      return await Promise.race([this.attempt(callbacks), timeout]);
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err)) {
        this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease request failed');
      }
      return false;
    } finally {
      cancel();
    }
  }

  private async attempt(callbacks: LeaderCallbacks): Promise<boolean> {
    const { client, namespace, name, identity } = this.options;
    const nowMs = this.clock.now();
    const now = microTime(nowMs);
    const durationSeconds = Math.round(this.leaseDurationMs / 1000);
    const existing = await client.get<Lease>(coreResources.leases, namespace, name);
    if (!existing) {
      const created = await client.create<Lease>(coreResources.leases, namespace, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      });
      this.observe(created);
      this.noteLeader(callbacks);
      return true;
    }
    this.observe(existing);
    this.noteLeader(callbacks);
    const spec = existing.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const heldByUs = holder === identity;
    const observedDurationMs = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (holder !== '' && !heldByUs && this.observedTime + observedDurationMs > nowMs) return false;
    const updated = await client.replace<Lease>(coreResources.leases, namespace, name, {
      ...existing,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: heldByUs ? (spec.acquireTime ?? now) : now,
        renewTime: now,
        leaseTransitions: heldByUs ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    });
    this.observe(updated);
    this.noteLeader(callbacks);
    return true;
  }

  private noteLeader(callbacks: LeaderCallbacks): void {
    const holder = this.leader;
    if (holder !== '' && holder !== this.lastLeader) {
      this.lastLeader = holder;
      callbacks.onNewLeader?.(holder);
    }
  }
}
