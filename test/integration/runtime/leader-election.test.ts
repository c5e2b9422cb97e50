import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { coreResources } from '../../../src/api/common/kube-object.js';
import { LeaderElector, type Lease } from '../../../src/runtime/leader-election.js';
import { createTestNamespace } from '../../support/cluster.js';
import { eventually, testClient } from './helpers.js';

describe('leader election on a real Lease', () => {
  let client: KubeClient;
  let ns: string;
  beforeAll(async () => {
    client = testClient();
    ns = await createTestNamespace('rt-leader');
  });
  afterAll(() => client.close());

  it('with two electors exactly one leads, and the other takes over at once when the first releases', async () => {
    const timing = { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 0.5 };
    const make = (identity: string) =>
      new LeaderElector({ client, namespace: ns, name: 'rt-lock', identity, ...timing });
    const a = make('replica-a');
    const b = make('replica-b');
    const stopA = new AbortController();
    const stopB = new AbortController();
    const started: string[] = [];
    const stopped: string[] = [];
    const runA = a.run(
      { onStartedLeading: () => void started.push('a'), onStoppedLeading: () => void stopped.push('a') },
      stopA.signal,
    );
    const runB = b.run(
      { onStartedLeading: () => void started.push('b'), onStoppedLeading: () => void stopped.push('b') },
      stopB.signal,
    );

    await eventually('a leader', () => a.isLeader() || b.isLeader());
    // Watch for 3 s (several retry periods): never two leaders, never a change of leader.
    const first = a.isLeader() ? 'a' : 'b';
    for (let i = 0; i < 30; i++) {
      expect(Number(a.isLeader()) + Number(b.isLeader())).toBe(1);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(started).toEqual([first]);
    const lease = await client.get<Lease>(coreResources.leases, ns, 'rt-lock');
    expect(lease?.spec?.holderIdentity).toBe(`replica-${first}`);

    // The leader shuts down: it releases the lease, and the other takes over long before the lease would expire.
    const [leaderStop, leaderRun, other] = first === 'a' ? [stopA, runA, b] : [stopB, runB, a];
    const t0 = Date.now();
    leaderStop.abort();
    await leaderRun;
    expect(stopped).toEqual([first]);
    await eventually('the other replica to lead', () => other.isLeader(), 5_000);
    expect(Date.now() - t0).toBeLessThan(timing.leaseDurationSeconds * 1000);
    expect(started).toEqual([first, first === 'a' ? 'b' : 'a']);
    const after = await client.get<Lease>(coreResources.leases, ns, 'rt-lock');
    expect(after?.spec?.holderIdentity).toBe(first === 'a' ? 'replica-b' : 'replica-a');
    expect(after?.spec?.leaseTransitions).toBe(1);

    (first === 'a' ? stopB : stopA).abort();
    await Promise.all([runA, runB]);
    expect((await client.get<Lease>(coreResources.leases, ns, 'rt-lock'))?.spec?.holderIdentity).toBe('');
  });
});
