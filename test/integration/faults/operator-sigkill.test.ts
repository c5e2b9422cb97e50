/**
 * Fault: the operator process is SIGKILLed (no drain, no lease release, ids it chose but did not
 * write yet are lost) while 500 objects converge, then again right after its restart. A fresh
 * process must converge everything with no duplicate deployed model, no lost or rewritten status,
 * and each finalizer exactly once. Half of the DeployedModels omit spec.id, so the operator
 * assigns their ids: a crash between choosing an id and recording it is where duplicates would come from.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { installCrds, testClient } from '../reconcilers/harness.js';
import { OperatorProcess, isConverged, kinds, readyCondition, sleep, type LeaseTimings } from './operator-process.js';

const ENDPOINTS = 100; // × 2 DeployedModels
const SERVICES = 10;
const ENDPOINTS_PER_SERVICE = 19;
const TOTAL = ENDPOINTS * 3 + SERVICES * (1 + ENDPOINTS_PER_SERVICE);
const FINALIZER = 'prediction.endpoint-operator.dev/finalizer';
// Short, so that each restarted replica (a new identity, as a new pod has) waits seconds, not 15, for the dead one's lease.
const LEASE: LeaseTimings = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 };
const LEASE_NAME = 'sigkill-leader';

const svcName = (s: number): string => `projects/fault-tests/locations/europe-west4/namespaces/shop/services/svc-${s}`;

/**
 * Endpoint i has models `ep-i-a` and `ep-i-b`. i % 4 == 0: both pin ids, split 60/40; 1 and 2: `a` pins
 * an id with 100% and `b` has its id assigned; 3: both have ids assigned (empty split). 100 pinned, 100
 * assigned. Pinned ids are below 10^9, assigned ones at or above, so the two never collide.
 */
function predictionManifest(): string {
  const docs: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const shape = i % 4;
    const idA = shape === 3 ? undefined : String(1_000_000 + i);
    const idB = shape === 0 ? String(2_000_000 + i) : undefined;
    const split = shape === 0 ? `{ "${idA}": 60, "${idB}": 40 }` : shape === 3 ? '{}' : `{ "${idA}": 100 }`;
    docs.push(`apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: ep-${i} }
spec: { displayName: "endpoint ${i}", trafficSplit: ${split} }`);
    for (const [suffix, id] of [
      ['a', idA],
      ['b', idB],
    ] as const) {
      docs.push(`apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ep-${i}-${suffix} }
spec:
  endpointRef: { name: ep-${i} }
  ${id === undefined ? '' : `id: "${id}"`}
  model: projects/fault-tests/locations/europe-west4/models/m-${i}-${suffix}
  automaticResources: { minReplicaCount: 1, maxReplicaCount: 2 }`);
    }
  }
  return docs.join('\n---\n');
}

function registryManifest(): string {
  const docs: string[] = [];
  for (let s = 0; s < SERVICES; s++) {
    docs.push(`apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: { name: svc-${s} }
spec: { name: ${svcName(s)} }`);
    for (let e = 0; e < ENDPOINTS_PER_SERVICE; e++) {
      docs.push(`apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: svc-${s}-ep-${e} }
spec: { name: ${svcName(s)}/endpoints/ep-${e}, address: 10.${s}.0.${e + 1}, port: ${8000 + e} }`);
    }
  }
  return docs.join('\n---\n');
}

interface World {
  readonly predictionEndpoints: KubeObject[];
  readonly deployedModels: KubeObject[];
  readonly registryServices: KubeObject[];
  readonly registryEndpoints: KubeObject[];
}

const all = (w: World): KubeObject[] => [
  ...w.predictionEndpoints,
  ...w.deployedModels,
  ...w.registryServices,
  ...w.registryEndpoints,
];
const byName = (objects: readonly KubeObject[]): Map<string, KubeObject> =>
  new Map(objects.map((o) => [o.metadata.name ?? '', o]));
const statusOf = (o: KubeObject | undefined): Record<string, unknown> => (o?.status ?? {}) as Record<string, unknown>;

describe('operator SIGKILL while 500 objects converge', () => {
  const client = testClient();
  const processes: OperatorProcess[] = [];
  let ns: string;

  /** A fast read for polling (kubectl would take longer than the window being watched). */
  async function world(): Promise<World> {
    const [predictionEndpoints, deployedModels, registryServices, registryEndpoints] = await Promise.all(
      [kinds.predictionEndpoints, kinds.deployedModels, kinds.registryServices, kinds.registryEndpoints].map(
        async (ref) => (await client.list(ref, ns)).items,
      ),
    );
    return {
      predictionEndpoints: predictionEndpoints ?? [],
      deployedModels: deployedModels ?? [],
      registryServices: registryServices ?? [],
      registryEndpoints: registryEndpoints ?? [],
    };
  }

  /** What a user sees: `kubectl get -o json` of each kind. */
  async function worldThroughKubectl(): Promise<World> {
    const get = async (resource: string): Promise<KubeObject[]> => {
      const r = await kubectl(['get', '-n', ns, resource, '-o', 'json'], { timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`kubectl get ${resource}: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { items: KubeObject[] }).items;
    };
    return {
      predictionEndpoints: await get('predictionendpoints.prediction.endpoint-operator.dev'),
      deployedModels: await get('deployedmodels.prediction.endpoint-operator.dev'),
      registryServices: await get('registryservices.registry.endpoint-operator.dev'),
      registryEndpoints: await get('registryendpoints.registry.endpoint-operator.dev'),
    };
  }

  async function converged(): Promise<number> {
    return all(await world()).filter(isConverged).length;
  }

  /** On a timeout, what is not converged and why (a DuplicateId here is the bug this test looks for). */
  async function describeNotConverged(): Promise<string> {
    const stuck = all(await world()).filter((o) => !isConverged(o));
    const reasons = stuck
      .slice(0, 10)
      .map(
        (o) =>
          `${String(o.kind)}/${o.metadata.name ?? ''}: ${JSON.stringify(readyCondition(o) ?? 'no Ready condition')}`,
      );
    return `${stuck.length} not converged, e.g.\n${reasons.join('\n')}`;
  }

  async function startReplica(identity: string): Promise<OperatorProcess> {
    const proc = await OperatorProcess.start({ namespace: ns, identity, leaseName: LEASE_NAME, leaseTimings: LEASE });
    processes.push(proc);
    await proc.waitReady();
    return proc;
  }

  async function holderOfLease(): Promise<string | undefined> {
    const lease = await client.get<KubeObject & { spec?: { holderIdentity?: string } }>(
      { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
      ns,
      LEASE_NAME,
    );
    return lease?.spec?.holderIdentity;
  }

  /** Polls until `done` holds, failing after `timeoutMs` with what the last poll saw. */
  async function until<T>(
    what: string,
    timeoutMs: number,
    poll: () => Promise<T>,
    done: (v: T) => boolean,
    pollMs = 100,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await poll();
      if (done(v)) return v;
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last saw ${JSON.stringify(v)}`);
      await sleep(pollMs);
    }
  }

  beforeAll(async () => {
    await installCrds(client);
    ns = await createTestNamespace('fault-sigkill');
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.dispose()));
    client.close();
  });

  it('converges after two SIGKILLs with no duplicate deployed model, no lost status, each finalizer once', async () => {
    // Everything is applied at once before the operator runs (a GitOps sync while the operator is being
    // rolled out), so the first replica starts with 500 objects to converge and dies in the middle of them.
    const applyStarted = Date.now();
    const applied = await kubectl(['apply', '--validate=false', '-n', ns, '-f', '-'], {
      input: `${predictionManifest()}\n---\n${registryManifest()}`,
      timeoutMs: 120_000,
    });
    expect(applied.code, applied.stderr.slice(0, 2000)).toBe(0);
    const started = Date.now();
    console.info(`[sigkill] kubectl apply of ${TOTAL} objects took ${started - applyStarted} ms`);

    const first = await startReplica('sigkill-replica-1');
    await until('the first replica to take the lease', 20_000, holderOfLease, (h) => h === first.identity);
    // Kill part-way, measured rather than slept: once a fifth of the objects converged.
    const atKill = await until('a fifth of the objects to converge', 60_000, converged, (n) => n >= TOTAL / 5, 50);
    await first.kill();
    const beforeKill = await world();
    const convergedAtKill = all(beforeKill).filter(isConverged);
    const assignedBeforeKill = beforeKill.deployedModels.filter(
      (m) => (m.spec as { id?: string }).id === undefined && statusOf(m).id !== undefined,
    ).length;
    console.info(
      `[sigkill] killed replica 1 ${Date.now() - started} ms after its start: ${atKill} converged when polled, ` +
        `${convergedAtKill.length} in the snapshot after the kill; ${assignedBeforeKill}/100 assigned ids recorded`,
    );
    expect(convergedAtKill.length).toBeGreaterThan(0);
    expect(convergedAtKill.length).toBeLessThan(TOTAL);

    // Second fault: kill the replacement as soon as it leads and has written something, well before it is done.
    const second = await startReplica('sigkill-replica-2');
    await until("the second replica to take the dead one's lease", 30_000, holderOfLease, (h) => h === second.identity);
    const atSecondKill = await until(
      'the second replica to make progress',
      60_000,
      converged,
      (n) => n > convergedAtKill.length,
      50,
    );
    await second.kill();
    console.info(`[sigkill] replica 2 killed at ${atSecondKill}/${TOTAL} converged`);

    const third = await startReplica('sigkill-replica-3');
    const convergeStarted = Date.now();
    await until('all 500 objects to converge', 90_000, converged, (n) => n === TOTAL, 250).catch(
      async (err: unknown) => {
        throw new Error(`${String(err)}\n${await describeNotConverged()}\n${await third.logTail(20)}`);
      },
    );
    console.info(
      `[sigkill] replica 3 converged all ${TOTAL} ${Date.now() - convergeStarted} ms after it was ready (lease wait included); ${Date.now() - started} ms since the first start`,
    );

    const after = await worldThroughKubectl();
    expect(all(after)).toHaveLength(TOTAL);
    expect(
      all(after)
        .filter((o) => !isConverged(o))
        .map((o) => `${String(o.kind)}/${o.metadata.name ?? ''}`),
    ).toEqual([]);

    // No duplicate deployed model: every endpoint lists exactly its two models, under distinct ids that the models report too.
    const models = byName(after.deployedModels);
    for (const endpoint of after.predictionEndpoints) {
      const name = endpoint.metadata.name ?? '';
      const listed = statusOf(endpoint).deployedModels as { id: string; deployedModelRef: string }[];
      expect(listed.map((d) => d.deployedModelRef).sort(), name).toEqual([`${name}-a`, `${name}-b`]);
      expect(new Set(listed.map((d) => d.id)).size, `${name}: ids ${JSON.stringify(listed)}`).toBe(2);
      expect(statusOf(endpoint).deployedModelCount, name).toBe(2);
      for (const entry of listed) {
        const model = models.get(entry.deployedModelRef);
        expect(statusOf(model).id, entry.deployedModelRef).toBe(entry.id);
        const pinned = (model?.spec as { id?: string } | undefined)?.id;
        if (pinned !== undefined) expect(entry.id, entry.deployedModelRef).toBe(pinned);
        else expect(entry.id, entry.deployedModelRef).toMatch(/^[1-9][0-9]{9}$/);
      }
    }
    // Each finalizer exactly once (a replay of "add finalizer" after a crash must not append it twice).
    for (const o of [...after.predictionEndpoints, ...after.deployedModels])
      expect(o.metadata.finalizers, o.metadata.name).toEqual([FINALIZER]);
    // Every service lists its 19 endpoints.
    for (const service of after.registryServices) {
      expect((statusOf(service).endpoints as unknown[]).length, service.metadata.name).toBe(ENDPOINTS_PER_SERVICE);
    }

    // No lost or rewritten status: what was recorded before the kill is still there, unchanged.
    const current = byName(all(after));
    let compared = 0;
    for (const before of convergedAtKill) {
      const name = before.metadata.name ?? '';
      const now = current.get(name);
      expect(now?.metadata.uid, name).toBe(before.metadata.uid);
      const was = statusOf(before);
      const is = statusOf(now);
      for (const field of ['createTime', 'updateTime', 'id', 'deployTime', 'name']) {
        if (was[field] !== undefined) expect(is[field], `${name} status.${field}`).toBe(was[field]);
      }
      // Ready stayed True throughout: a flap to False/Unknown and back would have moved lastTransitionTime.
      expect(readyCondition(now ?? before)?.lastTransitionTime, `${name} Ready.lastTransitionTime`).toBe(
        readyCondition(before)?.lastTransitionTime,
      );
      compared++;
    }
    // Models that had an id recorded before the kill but were not yet Ready keep that id too.
    for (const before of beforeKill.deployedModels) {
      const id = statusOf(before).id;
      if (id !== undefined) expect(statusOf(current.get(before.metadata.name ?? '')).id, before.metadata.name).toBe(id);
    }
    expect(compared).toBe(convergedAtKill.length);
  }, 240_000);
});
