/**
 * Serving benchmark (B8): DeployedModels with spec.containerSpec converging to Ready on simulated nodes.
 *
 *   npx tsx bench/serving.ts     (BENCH_MODELS, BENCH_NODES, BENCH_CONCURRENCY to scale)
 *
 * On a fresh local control plane with kube-controller-manager, kube-scheduler and BENCH_NODES kwok nodes:
 * - baseline, in its own namespace: a bare client creates the Deployment and Service the operator would
 *   make for each model (the same manifests, from serving-plan.ts), CONCURRENCY requests in flight; the
 *   clock stops when every Deployment has its replicas available;
 * - operator, in another namespace: one PredictionEndpoint and BENCH_MODELS DeployedModels are created the
 *   same way while the operator runs in this process; the clock stops when every model is Ready (its
 *   replicas available) with a current observedGeneration. Goal: operator ÷ baseline ≤ 1.3.
 * Nodes are large enough for both phases' pods (the baseline's stay). The operator phase also reports this process's RSS growth (the operator's caches of Deployments and
 * Pods: the B3 budget) and its peak RSS.
 */
import { pino } from 'pino';
import { startControlPlane, type ControlPlane } from '../dev/cluster/index.js';
import { allKinds } from '../src/api/kinds.js';
import type { ContainerSpec } from '../src/api/prediction/v1/container-spec.js';
import type { DeployedModelSpec } from '../src/api/prediction/v1/deployed-model-schema.js';
import { installCrds } from '../src/operator/crds.js';
import { startOperator } from '../src/operator/start.js';
import { servicesResource } from '../src/runtime/endpoint-slices.js';
import { KubeClient } from '../src/kube/kube-client.js';
import type { KubeObject } from '../src/api/common/kube-object.js';
import { DEFAULT_MACHINE_CATALOGUE } from '../src/api/prediction/v1/machine-catalogue.js';
import { deploymentsResource } from '../src/reconcilers/serving/serving-apply.js';
import { deploymentManifest, resolveMachine, serviceManifest } from '../src/reconcilers/serving/serving-plan.js';
import { recordResults } from './results.js';

const MODELS = Number(process.env['BENCH_MODELS'] ?? 200);
const NODES = Number(process.env['BENCH_NODES'] ?? 20);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 16);
const TIMEOUT_S = Number(process.env['BENCH_TIMEOUT_S'] ?? 900);
const GROUP = 'prediction.endpoint-operator.dev';
const dmRef = { group: GROUP, version: 'v1', plural: 'deployedmodels', namespaced: true };
const peRef = { group: GROUP, version: 'v1', plural: 'predictionendpoints', namespaced: true };
const nsRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

const container: ContainerSpec = {
  imageUri: 'registry.example/model-server:1',
  predictRoute: '/predict',
  healthRoute: '/health',
};
const resources = { machineSpec: { machineType: 'n1-standard-2' }, minReplicaCount: 1 };

function modelObject(i: number): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'DeployedModel',
    metadata: { name: `model-${i}` },
    spec: {
      endpointRef: { name: 'bench' },
      id: String(1000 + i),
      model: `projects/p/locations/l/models/m${i}`,
      containerSpec: container,
      dedicatedResources: resources,
    },
  };
}

/** What the operator would apply for model i, without an owner (the bare client has no DeployedModel). */
function bareObjects(i: number, namespace: string): [KubeObject, KubeObject] {
  const spec = (modelObject(i).spec ?? {}) as DeployedModelSpec & { containerSpec: ContainerSpec };
  const model: KubeObject = { metadata: { name: `model-${i}`, namespace, uid: `bare-${i}` } };
  const input = { model, spec, id: String(1000 + i) };
  const machine = resolveMachine(spec, DEFAULT_MACHINE_CATALOGUE);
  if (!machine.ok) throw new Error(machine.message);
  const strip = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, ownerReferences: undefined } });
  return [strip(deploymentManifest(input, machine, true, undefined)), strip(serviceManifest(input))];
}

async function inParallel(count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + TIMEOUT_S * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const available = (d: KubeObject): boolean => {
  const s = d.status as { availableReplicas?: number } | undefined;
  return (s?.availableReplicas ?? 0) >= 1;
};
const modelReady = (m: KubeObject): boolean => {
  const s = m.status as
    | { observedGeneration?: number; conditions?: { type: string; status: string; observedGeneration?: number }[] }
    | undefined;
  const ready = s?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === m.metadata.generation;
};

async function baseline(client: KubeClient, namespace: string): Promise<number> {
  const start = performance.now();
  await inParallel(MODELS, async (i) => {
    const [deployment, service] = bareObjects(i, namespace);
    await client.create(deploymentsResource, namespace, deployment);
    await client.create(servicesResource, namespace, service);
  });
  await until(
    'bare Deployments available',
    async () => (await client.list(deploymentsResource, namespace)).items.filter(available).length >= MODELS,
  );
  return performance.now() - start;
}

async function withOperator(
  client: KubeClient,
  kubeconfig: string,
  namespace: string,
): Promise<{ ms: number; rssGrowthMiB: number; peakRssMiB: number }> {
  const opClient = KubeClient.fromKubeconfig(kubeconfig);
  const operator = await startOperator({
    client: opClient,
    settings: {
      project: '{namespace}',
      location: 'l',
      namespaces: [namespace],
      workers: WORKERS,
      leaderElection: { enabled: false, namespace, leaseName: 'bench' },
    },
    log: pino({ level: process.env['BENCH_LOG'] ?? 'warn' }),
  });
  await operator.ready;
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 100);
  try {
    const start = performance.now();
    await client.create(peRef, namespace, {
      apiVersion: `${GROUP}/v1`,
      kind: 'PredictionEndpoint',
      metadata: { name: 'bench' },
      spec: { displayName: 'bench' },
    });
    await inParallel(MODELS, async (i) => {
      await client.create(dmRef, namespace, modelObject(i));
    });
    await until(
      'every DeployedModel Ready',
      async () => (await client.list(dmRef, namespace)).items.filter(modelReady).length >= MODELS,
    );
    const ms = performance.now() - start;
    return { ms, rssGrowthMiB: (process.memoryUsage().rss - rss0) / 2 ** 20, peakRssMiB: peak / 2 ** 20 };
  } finally {
    clearInterval(sampler);
    await operator.stop();
    opClient.close();
  }
}

async function main(): Promise<number> {
  console.log(
    `serving benchmark: ${MODELS} DeployedModels with containerSpec (1 replica of n1-standard-2 each) on ${NODES} kwok nodes, ${CONCURRENCY} requests in flight`,
  );
  let plane: ControlPlane | undefined;
  try {
    plane = await startControlPlane({
      watchCache: true,
      nodes: { count: NODES, cpu: '64', memory: '256Gi', pods: 110 },
      log: (l) => console.error(`[control plane] ${l}`),
    });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    await installCrds(client, { kinds: allKinds, crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    for (const name of ['bench-bare', 'bench-serving'])
      await client.create(nsRef, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const baseMs = await baseline(client, 'bench-bare');
    console.log(
      `  baseline: ${(baseMs / 1000).toFixed(2)} s (create Deployment + Service, until every Deployment is available)`,
    );
    const op = await withOperator(client, plane.kubeconfigPath, 'bench-serving');
    const ratio = op.ms / baseMs;
    console.log(
      `  operator: ${(op.ms / 1000).toFixed(2)} s until every DeployedModel is Ready; RSS +${op.rssGrowthMiB.toFixed(1)} MiB, peak ${op.peakRssMiB.toFixed(1)} MiB`,
    );
    console.log(
      `B8: baseline ${(baseMs / 1000).toFixed(2)} s, operator ${(op.ms / 1000).toFixed(2)} s, ratio ${ratio.toFixed(3)} (goal <= 1.3)`,
    );
    const notes = `${MODELS} models, ${NODES} kwok nodes, ${CONCURRENCY} requests in flight, ${WORKERS} workers per controller`;
    recordResults(
      [
        {
          id: 'B8.serving.ratio',
          name: `time until ${MODELS} containerSpec DeployedModels are Ready: operator ÷ bare client creating the same Deployments and Services`,
          value: Number(ratio.toFixed(3)),
          unit: 'ratio',
          goal: { op: '<=', value: 1.3 },
          baseline: {
            value: Number((baseMs / 1000).toFixed(2)),
            name: 'bare client: Deployment + Service per model, until available, s',
          },
          ratio: Number(ratio.toFixed(3)),
          notes,
        },
        {
          id: 'B8.serving.rss_growth',
          name: 'RSS growth of the process running the operator during the serving phase',
          value: Number(op.rssGrowthMiB.toFixed(1)),
          unit: 'MiB',
          notes: `peak ${op.peakRssMiB.toFixed(1)} MiB; the bench client shares the process`,
        },
      ],
      {},
    );
    client.close();
    return 0;
  } finally {
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
