import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/api-error.js';
import { ManualClock, flushMicrotasks } from '../../support/manual-clock.js';
import { LeaderElector, microTime, type Lease, type LeaseClient } from '../../../src/runtime/leader-election.js';

/** An in-memory Lease with the apiserver's optimistic concurrency (resourceVersion checks). */
class LeaseStore implements LeaseClient {
  lease: Lease | undefined;
  private rv = 0;
  failing = false;
  async get<T>(): Promise<T | undefined> {
    if (this.failing) throw new Error('connection refused');
    return structuredClone(this.lease) as T | undefined;
  }
  async create<T>(_ref: unknown, _ns: unknown, body: unknown): Promise<T> {
    if (this.failing) throw new Error('connection refused');
    if (this.lease) throw new ApiError(409, 'AlreadyExists', 'exists', {});
    return this.store(body as Lease) as T;
  }
  async replace<T>(_ref: unknown, _ns: unknown, _name: string, body: unknown): Promise<T> {
    if (this.failing) throw new Error('connection refused');
    const lease = body as Lease;
    if (lease.metadata.resourceVersion !== this.lease?.metadata.resourceVersion)
      throw new ApiError(409, 'Conflict', 'modified', {});
    return this.store(lease) as T;
  }
  /** Someone else writes the lease directly. */
  set(spec: Lease['spec']): void {
    this.store({
      metadata: { name: 'lock', namespace: 'ns', resourceVersion: this.lease?.metadata.resourceVersion ?? '' },
      spec: spec ?? {},
    });
  }
  private store(lease: Lease): Lease {
    this.lease = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } });
    return structuredClone(this.lease);
  }
}

function elector(store: LeaseStore, clock: ManualClock, identity: string): LeaderElector {
  return new LeaderElector({ client: store, namespace: 'ns', name: 'lock', identity, clock, random: () => 0 });
}

describe('LeaderElector (manual clock)', () => {
  it('takes over an abandoned lease only after leaseDuration measured on its own clock, whatever renewTime says', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new LeaseStore();
    // The holder's renewTime is from another machine's clock, far in the past: it must not be trusted.
    store.set({ holderIdentity: 'gone', leaseDurationSeconds: 15, renewTime: microTime(0), leaseTransitions: 3 });
    const b = elector(store, clock, 'b');
    const stop = new AbortController();
    const running = b.run({ onStartedLeading: () => undefined }, stop.signal);
    await flushMicrotasks();
    expect(b.isLeader()).toBe(false);
    await clock.advance(14_000);
    expect(b.isLeader()).toBe(false);
    await clock.advance(2_000);
    expect(b.isLeader()).toBe(true);
    expect(store.lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 4 });
    stop.abort();
    await running;
    expect(store.lease?.spec?.holderIdentity).toBe('');
  });

  it('gives up leadership when it cannot renew within the renew deadline', async () => {
    const clock = new ManualClock(0);
    const store = new LeaseStore();
    const a = elector(store, clock, 'a');
    let leadership: AbortSignal | undefined;
    let stoppedAt: number | undefined;
    const running = a.run(
      { onStartedLeading: (s) => void (leadership = s), onStoppedLeading: () => void (stoppedAt = clock.now()) },
      new AbortController().signal,
    );
    await flushMicrotasks();
    expect(a.isLeader()).toBe(true);
    store.failing = true;
    await clock.advance(8_000);
    expect(a.isLeader()).toBe(true);
    expect(leadership?.aborted).toBe(false);
    await clock.advance(2_000);
    await running;
    expect(a.isLeader()).toBe(false);
    expect(leadership?.aborted).toBe(true);
    expect(stoppedAt).toBe(10_000);
  });

  it('stops at once when it sees that another replica holds the lease', async () => {
    const clock = new ManualClock(0);
    const store = new LeaseStore();
    const a = elector(store, clock, 'a');
    let stopped = false;
    const running = a.run(
      { onStartedLeading: () => undefined, onStoppedLeading: () => void (stopped = true) },
      new AbortController().signal,
    );
    await flushMicrotasks();
    expect(a.isLeader()).toBe(true);
    store.set({ holderIdentity: 'intruder', leaseDurationSeconds: 15 });
    await clock.advance(2_000);
    await running;
    expect(stopped).toBe(true);
  });

  it('a conflicting write means not leading (two candidates cannot both win)', async () => {
    const clock = new ManualClock(0);
    const store = new LeaseStore();
    const a = elector(store, clock, 'a');
    const b = elector(store, clock, 'b');
    const stop = new AbortController();
    const runs = [
      a.run({ onStartedLeading: () => undefined }, stop.signal),
      b.run({ onStartedLeading: () => undefined }, stop.signal),
    ];
    await flushMicrotasks();
    for (let t = 0; t < 20; t++) {
      expect(Number(a.isLeader()) + Number(b.isLeader())).toBe(1);
      await clock.advance(1_000);
    }
    stop.abort();
    await Promise.all(runs);
  });

  it('rejects a renew deadline not shorter than the lease duration', () => {
    expect(
      () =>
        new LeaderElector({
          client: new LeaseStore(),
          namespace: 'ns',
          name: 'l',
          identity: 'x',
          leaseDurationSeconds: 10,
          renewDeadlineSeconds: 10,
        }),
    ).toThrow(/renewDeadline/);
  });
});
