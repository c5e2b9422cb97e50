import { beforeAll, describe, expect, it } from 'vitest';
import { reconcileErrors, reconcileTotal, statusConflicts } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import {
  apply,
  eventually,
  exampleBackendsIn,
  examplesIn,
  getJson,
  installCrds,
  InstrumentedClient,
  readyOf,
  runOperatorWith,
  testClient,
  waitReady,
} from './harness.js';
import { kstatus } from '../../support/kstatus.js';

const SVC = 'projects/demo-project/locations/europe-west4/namespaces/shop/services/payments';

function endpoints(count: number, prefix: string): string {
  return Array.from(
    { length: count },
    (_, i) => `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: ${prefix}-${i} }
spec: { displayName: "${prefix} ${i}" }
`,
  ).join('---\n');
}

async function reconciles(controller: string): Promise<number> {
  return metricValue(reconcileTotal, { controller });
}

describe('the operator on a real apiserver', () => {
  beforeAll(async () => {
    const client = testClient();
    await installCrds(client);
    client.close();
  });

  describe('restart', () => {
    let ns: string;
    beforeAll(async () => {
      ns = await createTestNamespace('reconcile-restart');
    });

    it('makes zero status writes when restarted with everything Ready', async () => {
      const first = InstrumentedClient.forTestCluster();
      const op1 = await runOperatorWith(first, ns);
      await apply(ns, examplesIn('prediction', ns));
      await apply(ns, await exampleBackendsIn('prediction', ns));
      await apply(
        ns,
        `
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: { name: payments }
spec: { name: ${SVC} }
---
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: payments-a }
spec: { name: ${SVC}/endpoints/a, address: 10.0.0.1, port: 443 }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: fraud-scoring-shadow }
spec: { endpointRef: { name: fraud-scoring }, model: projects/p/locations/l/models/shadow, automaticResources: { minReplicaCount: 1 } }
`,
      );
      await waitReady(ns, 'predictionendpoints,deployedmodels,registryservices,registryendpoints --all');
      // Let the last status-driven follow-ups (endpoint lists after model writes) settle.
      await eventually('status writes to settle', async () => {
        const n = first.statusPatches;
        await new Promise((r) => setTimeout(r, 1500));
        return first.statusPatches === n;
      });
      expect(first.statusPatches).toBeGreaterThan(0);
      const assignedId = (await getJson(ns, 'deployedmodel/fraud-scoring-shadow')).status?.id;
      expect(assignedId).toMatch(/^[0-9]{10}$/);
      await op1.stop();
      first.close();

      const second = InstrumentedClient.forTestCluster();
      const counts = await Promise.all(
        ['predictionendpoint', 'deployedmodel', 'registryservice', 'registryendpoint'].map((c) =>
          reconciles(`${c}@${ns}`),
        ),
      );
      const op2 = await runOperatorWith(second, ns);
      await op2.ready;
      const objects = JSON.parse(
        (
          await kubectl([
            'get',
            '-n',
            ns,
            'predictionendpoints,deployedmodels,registryservices,registryendpoints',
            '-o',
            'json',
          ])
        ).stdout,
      ) as { items: unknown[] };
      // Every object is reconciled at least once after the restart...
      await eventually('every object reconciled after the restart', async () => {
        const now = await Promise.all(
          ['predictionendpoint', 'deployedmodel', 'registryservice', 'registryendpoint'].map((c) =>
            reconciles(`${c}@${ns}`),
          ),
        );
        return now.reduce((a, b) => a + b, 0) - counts.reduce((a, b) => a + b, 0) >= objects.items.length;
      });
      await new Promise((r) => setTimeout(r, 1000));
      // ...and none of them needs a status write.
      expect(second.statusPatches).toBe(0);
      expect((await getJson(ns, 'deployedmodel/fraud-scoring-shadow')).status?.id).toBe(assignedId);
      await op2.stop();
      second.close();
    });
  });

  describe('API errors', () => {
    let ns: string;
    beforeAll(async () => {
      ns = await createTestNamespace('reconcile-errors');
    });

    it('retries a status write that hits a 409 Conflict', async () => {
      const client = InstrumentedClient.forTestCluster();
      const conflictsBefore = await metricValue(statusConflicts, { kind: 'PredictionEndpoint' });
      // The first status write is preceded by another writer's change, so its resourceVersion is stale.
      client.beforeStatusPatch = async (namespace, name) => {
        const r = await kubectl([
          'label',
          '-n',
          namespace ?? '',
          `predictionendpoint/${name}`,
          'touched=yes',
          '--overwrite',
        ]);
        if (r.code !== 0) throw new Error(r.stderr);
      };
      const op = await runOperatorWith(client, ns);
      await apply(ns, endpoints(1, 'conflict'));
      await waitReady(ns, 'predictionendpoint/conflict-0');
      expect(await metricValue(statusConflicts, { kind: 'PredictionEndpoint' })).toBeGreaterThan(conflictsBefore);
      expect((await getJson(ns, 'predictionendpoint/conflict-0')).metadata.labels?.touched).toBe('yes');
      await op.stop();
      client.close();
    });

    it('keeps reconciling the others while one object keeps failing, backing off without a hot loop', async () => {
      const client = InstrumentedClient.forTestCluster();
      client.failStatusFor = (name) => name === 'broken-0';
      const op = await runOperatorWith(client, ns);
      const errorsBefore = await metricValue(reconcileErrors, { controller: `predictionendpoint@${ns}` });
      await apply(ns, endpoints(1, 'broken') + '---\n' + endpoints(5, 'healthy'));
      await waitReady(
        ns,
        'predictionendpoint/healthy-0 predictionendpoint/healthy-1 predictionendpoint/healthy-2 predictionendpoint/healthy-3 predictionendpoint/healthy-4',
      );
      await new Promise((r) => setTimeout(r, 3000));
      const errors = (await metricValue(reconcileErrors, { controller: `predictionendpoint@${ns}` })) - errorsBefore;
      // Exponential backoff from 5 ms: about a dozen attempts in the first few seconds, not thousands.
      expect(errors).toBeGreaterThan(2);
      expect(errors).toBeLessThan(25);
      expect(readyOf(await getJson(ns, 'predictionendpoint/broken-0'))?.status).not.toBe('True');
      // Once the API recovers, the object converges on the next retry.
      client.failStatusFor = () => false;
      await waitReady(ns, 'predictionendpoint/broken-0', 90);
      await op.stop();
      client.close();
    });
  });

  describe('failure reporting', () => {
    let ns: string;
    beforeAll(async () => {
      ns = await createTestNamespace('reconcile-report');
    });

    it('reports a failing API call as Ready=Unknown, ReconcileError, and recovers', async () => {
      const client = InstrumentedClient.forTestCluster();
      client.failObjectPatchFor = (name) => name === 'refused-0';
      const op = await runOperatorWith(client, ns);
      await apply(ns, endpoints(1, 'refused'));
      await eventually('ReconcileError in status', async () => {
        const c = readyOf(await getJson(ns, 'predictionendpoint/refused-0'));
        return c?.status === 'Unknown' && c.reason === 'ReconcileError' && c.message?.includes('injected failure');
      });
      // Retried without a person: kstatus reads it in progress (Reconciling=True), not failed.
      expect((await kstatus(await getJson(ns, 'predictionendpoint/refused-0'))).status).toBe('InProgress');
      client.failObjectPatchFor = () => false;
      await waitReady(ns, 'predictionendpoint/refused-0', 90);
      expect((await kstatus(await getJson(ns, 'predictionendpoint/refused-0'))).status).toBe('Current');
      await op.stop();
      client.close();
    });

    it('reports a 403 once as Ready=False, RequestRejected, does not retry it, and reconciles again when the object changes', async () => {
      const client = InstrumentedClient.forTestCluster();
      client.objectPatchFailure = 403;
      client.failObjectPatchFor = (name) => name === 'forbidden-0';
      const op = await runOperatorWith(client, ns);
      await apply(ns, endpoints(1, 'forbidden'));
      await eventually('RequestRejected in status', async () => {
        const c = readyOf(await getJson(ns, 'predictionendpoint/forbidden-0'));
        return c?.status === 'False' && c.reason === 'RequestRejected' && c.message?.includes('injected refusal');
      });
      // Stuck until someone acts: kstatus (Flux `wait`, kpt) fails fast on it instead of waiting out a timeout.
      expect((await kstatus(await getJson(ns, 'predictionendpoint/forbidden-0'))).status).toBe('Failed');
      // Terminal: no backoff retries. (The report's own status write re-queues it once, which
      // meets the same refusal and reports nothing new.)
      const attempts = client.objectPatchAttempts.get('forbidden-0') ?? 0;
      expect(attempts).toBeLessThanOrEqual(2);
      await new Promise((r) => setTimeout(r, 3000));
      expect(client.objectPatchAttempts.get('forbidden-0')).toBe(attempts);
      client.failObjectPatchFor = () => false;
      expect(
        (await kubectl(['annotate', '-n', ns, 'predictionendpoint/forbidden-0', 'example.com/retry=1'])).code,
      ).toBe(0);
      await waitReady(ns, 'predictionendpoint/forbidden-0', 90);
      await op.stop();
      client.close();
    });
  });

  describe('leader election', () => {
    let ns: string;
    beforeAll(async () => {
      ns = await createTestNamespace('reconcile-leader');
    });

    it('lets exactly one of two instances reconcile, and the other takes over when it stops', async () => {
      const leaderElection = {
        enabled: true,
        namespace: ns,
        leaseName: 'endpoint-operator',
        leaseDurationSeconds: 4,
        renewDeadlineSeconds: 3,
        retryPeriodSeconds: 1,
      };
      const a = InstrumentedClient.forTestCluster();
      const b = InstrumentedClient.forTestCluster();
      const opA = await runOperatorWith(a, ns, { leaderElection: { ...leaderElection, identity: 'instance-a' } });
      const opB = await runOperatorWith(b, ns, { leaderElection: { ...leaderElection, identity: 'instance-b' } });
      await Promise.all([opA.ready, opB.ready]);
      await eventually('a leader', () => opA.isLeader() || opB.isLeader());
      await apply(ns, endpoints(4, 'led'));
      await waitReady(ns, 'predictionendpoints --all');
      expect([opA.isLeader(), opB.isLeader()].filter(Boolean)).toHaveLength(1);
      const [leader, follower, leaderClient, followerClient] = opA.isLeader() ? [opA, opB, a, b] : [opB, opA, b, a];
      expect(leaderClient.statusPatches).toBeGreaterThanOrEqual(4);
      expect(followerClient.statusPatches).toBe(0);

      await leader.stop(); // releases the lease
      await eventually('the follower to take over', () => follower.isLeader(), 20_000);
      await apply(ns, endpoints(1, 'after-failover'));
      await waitReady(ns, 'predictionendpoint/after-failover-0');
      expect(followerClient.statusPatches).toBeGreaterThanOrEqual(1);
      await follower.stop();
      a.close();
      b.close();
    });
  });
});
