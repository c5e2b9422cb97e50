/**
 * Convergence benchmark: how long the operator takes to bring a large batch of objects to Ready,
 * against a baseline that does the least any controller must do.
 *
 *   npx tsx bench/convergence.ts            (BENCH_ENDPOINTS, BENCH_REGISTRY_ENDPOINTS, BENCH_CONCURRENCY to scale)
 *
 * On a fresh local control plane (real etcd + kube-apiserver):
 * - baseline, in its own namespace: a bare client creates every object and writes its final status
 *   once, CONCURRENCY requests in flight;
 * - operator, in another namespace: the same objects are created the same way while the operator
 *   runs in-process; the clock stops when every object is Ready with a current observedGeneration
 *   (seen through a watch, not by polling).
 * Objects: N PredictionEndpoints with two DeployedModels each and a 70/30 split, and M
 * RegistryEndpoints under 10 RegistryServices. Bounded by BENCH_TIMEOUT_S (default 900).
 */
import { pino } from 'pino';
import { generateCrds } from '../src/api/crd/generate.js';
import { startControlPlane, type ControlPlane } from '../src/devcluster/index.js';
import { startOperator } from '../src/operator/start.js';
import { resources } from '../src/reconcilers/context.js';
import { resolveModelStates } from '../src/reconcilers/deployed-model-ids.js';
import { computeDeployedModelStatus } from '../src/reconcilers/deployed-model-status.js';
import { computePredictionEndpointStatus } from '../src/reconcilers/prediction-endpoint-status.js';
import { computeRegistryEndpointStatus, computeRegistryServiceStatus } from '../src/reconcilers/registry-status.js';
import { rfc3339 } from '../src/reconcilers/status-common.js';
import { DEFAULT_RESERVED_PREFIXES } from '../src/api/common/kind.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import type { KubeObject, ResourceRef } from '../src/runtime/kube-object.js';

const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 1000);
const REGISTRY_ENDPOINTS = Number(process.env['BENCH_REGISTRY_ENDPOINTS'] ?? 1000);
const SERVICES = 10;
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
/** Concurrent reconciles per controller (four controllers). */
const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 16);
const TIMEOUT_S = Number(process.env['BENCH_TIMEOUT_S'] ?? 900);
const PROJECT = 'bench-project';
const LOCATION = 'europe-west4';
const CRDS: ResourceRef = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

interface Item {
  readonly ref: ResourceRef;
  readonly body: KubeObject;
}

function serviceName(s: number): string {
  return `projects/${PROJECT}/locations/${LOCATION}/namespaces/bench/services/svc-${s}`;
}

/** The objects, interleaved the way a GitOps sync of many files arrives: children sometimes before parents. */
function workload(): Item[] {
  const items: Item[] = [];
  const pe = (i: number): Item => ({
    ref: resources.predictionEndpoints,
    body: { apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'PredictionEndpoint', metadata: { name: `ep-${i}` }, spec: { displayName: `Endpoint ${i}`, trafficSplit: { '1': 70, '2': 30 } } },
  });
  const dm = (i: number, id: string): Item => ({
    ref: resources.deployedModels,
    body: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: `ep-${i}-m${id}` },
      spec: { endpointRef: { name: `ep-${i}` }, id, model: `projects/${PROJECT}/locations/${LOCATION}/models/model-${id}`, automaticResources: { minReplicaCount: 1, maxReplicaCount: 2 } },
    },
  });
  for (let s = 0; s < SERVICES; s++) {
    items.push({ ref: resources.registryServices, body: { apiVersion: 'registry.endpoint-operator.dev/v1', kind: 'RegistryService', metadata: { name: `svc-${s}` }, spec: { name: serviceName(s) } } });
  }
  for (let i = 0; i < Math.max(ENDPOINTS, REGISTRY_ENDPOINTS); i++) {
    if (i < ENDPOINTS) {
      if (i % 2 === 0) items.push(pe(i), dm(i, '1'), dm(i, '2'));
      else items.push(dm(i, '1'), dm(i, '2'), pe(i));
    }
    if (i < REGISTRY_ENDPOINTS) {
      const s = i % SERVICES;
      items.push({
        ref: resources.registryEndpoints,
        body: {
          apiVersion: 'registry.endpoint-operator.dev/v1',
          kind: 'RegistryEndpoint',
          metadata: { name: `svc-${s}-ep-${i}` },
          spec: { name: `${serviceName(s)}/endpoints/ep-${i}`, address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 8080, annotations: { 'example.com/shard': String(i % 7) } },
        },
      });
    }
  }
  return items;
}

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await fn(item);
    }
  }));
}

/** The status the operator would converge to, computed with the reconcilers' own pure functions. */
function finalStatus(obj: KubeObject, all: Map<string, KubeObject>): unknown {
  const now = rfc3339(new Date());
  const spec = obj.spec as Record<string, unknown>;
  switch (obj.kind) {
    case 'PredictionEndpoint': {
      const models = ['1', '2'].map((id) => all.get(`DeployedModel/${obj.metadata.name ?? ''}-m${id}`)).filter((m): m is KubeObject => m !== undefined);
      return computePredictionEndpointStatus({ endpoint: obj, models, states: resolveModelStates(models, () => true, new Map()), specErrors: [], project: PROJECT, location: LOCATION, now }).status;
    }
    case 'DeployedModel': {
      const endpoint = all.get(`PredictionEndpoint/${(spec.endpointRef as { name: string }).name}`) ?? obj;
      return computeDeployedModelStatus({ model: obj, endpoint, state: { state: 'deployed', id: String(spec.id) }, specErrors: [], project: PROJECT, location: LOCATION, now }).status;
    }
    case 'RegistryService': {
      const endpoints = [...all.values()].filter((o) => o.kind === 'RegistryEndpoint' && String((o.spec as { name: string }).name).startsWith(`${String(spec.name)}/`));
      return computeRegistryServiceStatus({ service: obj, endpoints, specErrors: [], endpointErrors: () => [], reservedPrefixes: DEFAULT_RESERVED_PREFIXES, now }).status;
    }
    default:
      return computeRegistryEndpointStatus({ endpoint: obj, parentExists: true, specErrors: [], reservedPrefixes: DEFAULT_RESERVED_PREFIXES, now }).status;
  }
}

async function baseline(client: KubeClient, ns: string, items: readonly Item[]): Promise<number> {
  const all = new Map(items.map((i) => [`${i.body.kind ?? ''}/${i.body.metadata.name ?? ''}`, i.body]));
  const started = performance.now();
  await pool(items, CONCURRENCY, async (item) => {
    const created = await client.create<KubeObject>(item.ref, ns, item.body);
    await client.patch(item.ref, ns, created.metadata.name ?? '', { status: finalStatus(created, all) }, { type: 'merge', subresource: 'status' });
  });
  return performance.now() - started;
}

function isConverged(obj: KubeObject): boolean {
  const status = obj.status as { conditions?: Array<{ type: string; status: string; observedGeneration?: number }> } | undefined;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === obj.metadata.generation;
}

async function withOperator(client: KubeClient, kubeconfig: string, ns: string, items: readonly Item[]): Promise<{ ms: number; writes: number }> {
  const operatorClient = KubeClient.fromKubeconfig(kubeconfig);
  const operator = await startOperator({
    client: operatorClient,
    settings: { project: PROJECT, location: LOCATION, namespaces: [ns], workers: WORKERS, leaderElection: { enabled: false, namespace: ns, leaseName: 'bench' } },
    log: pino({ level: process.env['BENCH_LOG'] ?? 'warn' }),
  });
  await operator.ready;
  // Completion is observed in the operator's own informer caches (what its watches delivered), so
  // measuring adds no watchers and no polling load to the apiserver, which the baseline does not pay either.
  const allConverged = (async () => {
    for (;;) {
      let converged = 0;
      for (const kind of Object.keys(resources) as Array<keyof typeof resources>) {
        for (const obj of operator.cached(kind)) if (isConverged(obj)) converged++;
      }
      if (converged >= items.length) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const { metricValue, statusWrites, statusConflicts, restClientRequests } = await import('../src/runtime/metrics.js');
  const writesBefore = await metricValue(statusWrites);
  const conflictsBefore = await metricValue(statusConflicts);
  const verbs = ['POST', 'PATCH', 'PUT', 'GET', 'DELETE'];
  const requestsBefore = await Promise.all(verbs.map((verb) => metricValue(restClientRequests, { verb })));
  const started = performance.now();
  await pool(items, CONCURRENCY, async (item) => {
    await client.create(item.ref, ns, item.body);
  });
  const createdAt = performance.now() - started;
  await allConverged;
  const ms = performance.now() - started;
  const writes = (await metricValue(statusWrites)) - writesBefore;
  const requestsAfter = await Promise.all(verbs.map((verb) => metricValue(restClientRequests, { verb })));
  const perVerb = verbs.map((v, i) => `${v} ${(requestsAfter[i] ?? 0) - (requestsBefore[i] ?? 0)}`).join(', ');
  console.log(`  operator: API requests of this process during the run (creates included): ${perVerb}; status conflicts ${(await metricValue(statusConflicts)) - conflictsBefore}`);
  console.log(`  operator: all created after ${(createdAt / 1000).toFixed(2)} s, all Ready after ${(ms / 1000).toFixed(2)} s (${writes} status writes for ${items.length} objects)`);
  await operator.stop();
  operatorClient.close();
  return { ms, writes };
}

async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

async function installCrds(client: KubeClient): Promise<void> {
  for (const crd of generateCrds({ conversion: { url: 'https://127.0.0.1:9/convert' } })) {
    await client.create(CRDS, undefined, crd);
  }
  for (;;) {
    const established = await Promise.all(generateCrds().map(async (crd) => {
      const got = await client.get<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(CRDS, undefined, crd.metadata.name);
      return got?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    }));
    if (established.every(Boolean)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  // Discovery and the REST handlers lag Established slightly.
  for (;;) {
    try {
      await Promise.all(Object.values(resources).map((ref) => client.list(ref, 'default', { limit: 1 })));
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function main(): Promise<number> {
  const items = workload();
  console.log(`convergence benchmark: ${ENDPOINTS} PredictionEndpoints (+${2 * ENDPOINTS} DeployedModels), ${REGISTRY_ENDPOINTS} RegistryEndpoints under ${SERVICES} RegistryServices = ${items.length} objects, concurrency ${CONCURRENCY}`);
  let plane: ControlPlane | undefined;
  const timer = setTimeout(() => {
    console.error(`benchmark exceeded ${TIMEOUT_S} s; stopping`);
    void (plane?.stop() ?? Promise.resolve()).finally(() => process.exit(2));
  }, TIMEOUT_S * 1000);
  try {
    plane = await startControlPlane({ watchCache: true, log: (l) => console.error(`[control plane] ${l}`) });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    await installCrds(client);
    await createNamespace(client, 'bench-baseline');
    await createNamespace(client, 'bench-operator');
    const base = await baseline(client, 'bench-baseline', items);
    console.log(`  baseline: ${(base / 1000).toFixed(2)} s (create + one status write per object)`);
    const op = await withOperator(client, plane.kubeconfigPath, 'bench-operator', items);
    const ratio = op.ms / base;
    console.log(`baseline ${(base / 1000).toFixed(2)} s, operator ${(op.ms / 1000).toFixed(2)} s, ratio ${ratio.toFixed(3)} (goal <= 1.25)`);
    client.close();
    return 0;
  } finally {
    clearTimeout(timer);
    await plane?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
