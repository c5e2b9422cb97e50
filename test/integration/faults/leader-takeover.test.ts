/**
 * Fault: two replicas of `endpoint-operator run` with leader election; the leader is SIGKILLed, so
 * it cannot release the Lease. The follower (which until then reconciled nothing) must wait out
 * the lease (never take it early: two leaders would race on status and ids), take it over within
 * the bound client-go's algorithm gives, and converge objects applied after the kill.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { installCrds, testClient } from '../reconcilers/harness.js';
import { OperatorProcess, isConverged, sleep, type LeaseTimings } from './operator-process.js';

const LEASE: LeaseTimings = { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 };
const LEASE_NAME = 'takeover-leader';
const leases = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true } as const;

interface LeaseObject extends KubeObject {
  spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

/** A batch of objects: one endpoint with a pinned and an assigned-id model, one service with two endpoints. */
function batch(tag: string): string {
  const svc = `projects/takeover-tests/locations/europe-west4/namespaces/shop/services/svc-${tag}`;
  return `apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: ep-${tag} }
spec: { displayName: "endpoint ${tag}", trafficSplit: { "4242": 100 } }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ep-${tag}-pinned }
spec: { endpointRef: { name: ep-${tag} }, id: "4242", model: projects/takeover-tests/locations/europe-west4/models/pinned, automaticResources: { minReplicaCount: 1 } }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ep-${tag}-assigned }
spec: { endpointRef: { name: ep-${tag} }, model: projects/takeover-tests/locations/europe-west4/models/assigned, automaticResources: { minReplicaCount: 1 } }
---
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: { name: svc-${tag} }
spec: { name: ${svc} }
---
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: svc-${tag}-1 }
spec: { name: ${svc}/endpoints/one, address: 10.1.0.1, port: 443 }
---
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: svc-${tag}-2 }
spec: { name: ${svc}/endpoints/two, address: "2001:db8::2", port: 443 }
`;
}
const BATCH_SIZE = 6;

/** The sum over all samples of one metric in Prometheus text format (0 when it has none). */
function metricSum(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('leader takeover after SIGKILL', () => {
  const client = testClient();
  const processes: OperatorProcess[] = [];
  let ns: string;

  async function lease(): Promise<LeaseObject | undefined> {
    return client.get<LeaseObject>(leases, ns, LEASE_NAME);
  }

  /** Objects of one batch (by name prefix), read as a user would with kubectl. */
  async function batchObjects(tag: string): Promise<KubeObject[]> {
    const r = await kubectl([
      'get',
      '-n',
      ns,
      'predictionendpoints,deployedmodels,registryservices,registryendpoints',
      '-o',
      'json',
    ]);
    if (r.code !== 0) throw new Error(`kubectl get: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { items: KubeObject[] }).items.filter((o) =>
      (o.metadata.name ?? '').includes(`-${tag}`),
    );
  }

  async function untilConverged(tag: string, timeoutMs: number): Promise<KubeObject[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const objects = await batchObjects(tag);
      if (objects.length === BATCH_SIZE && objects.every(isConverged)) return objects;
      if (Date.now() > deadline) {
        const stuck = objects
          .filter((o) => !isConverged(o))
          .map((o) => `${String(o.kind)}/${o.metadata.name ?? ''}: ${JSON.stringify(o.status ?? {})}`);
        throw new Error(
          `batch ${tag} not converged after ${timeoutMs} ms (${objects.length}/${BATCH_SIZE} exist):\n${stuck.join('\n')}`,
        );
      }
      await sleep(200);
    }
  }

  async function apply(manifest: string): Promise<void> {
    const r = await kubectl(['apply', '--validate=false', '-n', ns, '-f', '-'], { input: manifest });
    if (r.code !== 0) throw new Error(`kubectl apply failed (${r.code}): ${r.stderr}`);
  }

  beforeAll(async () => {
    await installCrds(client);
    ns = await createTestNamespace('fault-takeover');
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.dispose()));
    client.close();
  });

  it('the follower takes over within the lease bound, not before it expires, and converges new objects', async () => {
    const replicas = await Promise.all(
      ['takeover-a', 'takeover-b'].map(async (identity) => {
        const proc = await OperatorProcess.start({
          namespace: ns,
          identity,
          leaseName: LEASE_NAME,
          leaseTimings: LEASE,
        });
        processes.push(proc);
        await proc.waitReady();
        return proc;
      }),
    );
    await apply(batch('before'));
    await untilConverged('before', 60_000);

    const holder = (await lease())?.spec?.holderIdentity;
    const leader = replicas.find((r) => r.identity === holder);
    const follower = replicas.find((r) => r.identity !== holder);
    if (leader === undefined || follower === undefined)
      throw new Error(`lease holder ${String(holder)} is neither replica`);
    // Only the leader reconciles: the follower keeps warm caches but has not run a single reconcile.
    const followerMetrics = await follower.metrics();
    expect(metricSum(followerMetrics, 'leader_election_master_status')).toBe(0);
    expect(metricSum(followerMetrics, 'controller_runtime_reconcile_total')).toBe(0);
    expect(metricSum(await leader.metrics(), 'leader_election_master_status')).toBe(1);

    await leader.kill();
    const killedAt = Date.now();
    // The dead leader's last renewal: the Lease cannot change again until someone else takes it.
    const lastRenewMs = Date.parse((await lease())?.spec?.renewTime ?? '');
    expect(Number.isFinite(lastRenewMs)).toBe(true);

    const deadline = killedAt + 30_000;
    let taken: LeaseObject | undefined;
    while (Date.now() < deadline) {
      const current = await lease();
      if (current?.spec?.holderIdentity === follower.identity) {
        taken = current;
        break;
      }
      await sleep(50);
    }
    const seenAfterKillMs = Date.now() - killedAt;
    expect(taken?.spec?.holderIdentity, `no takeover within 30 s of the kill:\n${await follower.logTail(20)}`).toBe(
      follower.identity,
    );
    const acquiredMs = Date.parse(taken?.spec?.acquireTime ?? '');
    const afterLastRenewMs = acquiredMs - lastRenewMs;
    console.info(
      `[takeover] ${follower.identity} acquired the lease ${afterLastRenewMs} ms after the dead leader's last renewal; seen ${seenAfterKillMs} ms after the kill`,
    );

    // Never early: the follower starts its lease-duration wait when it sees the last renewal, which is
    // after that renewal was written, so it cannot acquire before renewTime + leaseDuration.
    // (All processes share this machine's clock, so the two timestamps are comparable.)
    const durationMs = LEASE.leaseDurationSeconds * 1000;
    const retryMs = LEASE.retryPeriodSeconds * 1000;
    expect(afterLastRenewMs).toBeGreaterThanOrEqual(durationMs);
    // Not late: the follower polls every retryPeriod × (1..1.2) (client-go's jitter), so it sees the last
    // renewal at most 1.2 retry periods after it was written, and the expiry at most 1.2 after that:
    // leaseDuration + 2.4 retryPeriods, plus 1 s for API requests on a loaded 2-core machine.
    expect(afterLastRenewMs).toBeLessThanOrEqual(durationMs + 2.4 * retryMs + 1_000);
    expect(taken?.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);

    // The new leader converges objects applied after the kill, and the earlier ones stay converged.
    await apply(batch('after'));
    const after = await untilConverged('after', 60_000);
    const assigned = after.find((o) => o.metadata.name === 'ep-after-assigned');
    expect((assigned?.status as { id?: string } | undefined)?.id).toMatch(/^[1-9][0-9]{9}$/);
    expect((await batchObjects('before')).every(isConverged)).toBe(true);
    expect(metricSum(await follower.metrics(), 'leader_election_master_status')).toBe(1);
  }, 120_000);
});
