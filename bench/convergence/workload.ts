/**
 * The convergence benchmark's workload and its baseline: the objects a large GitOps sync applies,
 * the final status of each (computed with the reconcilers' own pure functions), and the bare
 * client that creates them and writes that status once.
 */
import { DEFAULT_RESERVED_PREFIXES } from '../../src/api/common/kind.js';
import { resources } from '../../src/api/kind-bindings.js';
import { resolveModelStates } from '../../src/reconcilers/deployed-model-ids.js';
import { computeDeployedModelStatus } from '../../src/reconcilers/deployed-model-status.js';
import { computePredictionEndpointStatus } from '../../src/reconcilers/prediction-endpoint-status.js';
import { computeRegistryEndpointStatus, computeRegistryServiceStatus } from '../../src/reconcilers/registry-status.js';
import { rfc3339 } from '../../src/reconcilers/status-common.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../../src/api/common/kube-object.js';

export const PROJECT = 'bench-project';
export const LOCATION = 'europe-west4';
/**
 * The project the DeployedModels' models belong to: not the operator's, so `spec.model` is a name recorded in
 * status, as a model deployed from another project's registry is. A model of the operator's own project would be
 * a Model object that the DeployedModel serves with its version's container, one Deployment each: that is B8
 * (serving.ts), not the convergence of the objects themselves.
 */
const MODEL_PROJECT = 'bench-model-registry';
export const SERVICES = 10;

export interface WorkloadSize {
  readonly endpoints: number;
  readonly registryEndpoints: number;
}

export interface Item {
  readonly ref: ResourceRef;
  readonly body: KubeObject;
}

function serviceName(s: number): string {
  return `projects/${PROJECT}/locations/${LOCATION}/namespaces/bench/services/svc-${s}`;
}

/** The objects, interleaved the way a GitOps sync of many files arrives: children sometimes before parents. */
export function workload({ endpoints, registryEndpoints }: WorkloadSize): Item[] {
  const items: Item[] = [];
  const pe = (i: number): Item => ({
    ref: resources.predictionEndpoints,
    body: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name: `ep-${i}` },
      spec: { displayName: `Endpoint ${i}`, trafficSplit: { '1': 70, '2': 30 } },
    },
  });
  const dm = (i: number, id: string): Item => ({
    ref: resources.deployedModels,
    body: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: `ep-${i}-m${id}` },
      spec: {
        endpointRef: { name: `ep-${i}` },
        id,
        model: `projects/${MODEL_PROJECT}/locations/${LOCATION}/models/model-${id}`,
        automaticResources: { minReplicaCount: 1, maxReplicaCount: 2 },
      },
    },
  });
  for (let s = 0; s < SERVICES; s++) {
    items.push({
      ref: resources.registryServices,
      body: {
        apiVersion: 'registry.endpoint-operator.dev/v1',
        kind: 'RegistryService',
        metadata: { name: `svc-${s}` },
        spec: { name: serviceName(s) },
      },
    });
  }
  for (let i = 0; i < Math.max(endpoints, registryEndpoints); i++) {
    if (i < endpoints) {
      if (i % 2 === 0) items.push(pe(i), dm(i, '1'), dm(i, '2'));
      else items.push(dm(i, '1'), dm(i, '2'), pe(i));
    }
    if (i < registryEndpoints) {
      const s = i % SERVICES;
      items.push({
        ref: resources.registryEndpoints,
        body: {
          apiVersion: 'registry.endpoint-operator.dev/v1',
          kind: 'RegistryEndpoint',
          metadata: { name: `svc-${s}-ep-${i}` },
          spec: {
            name: `${serviceName(s)}/endpoints/ep-${i}`,
            address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
            port: 8080,
            annotations: { 'example.com/shard': String(i % 7) },
          },
        },
      });
    }
  }
  return items;
}

export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next++];
        if (item !== undefined) await fn(item);
      }
    }),
  );
}

/** The status the operator would converge to, computed with the reconcilers' own pure functions. */
function finalStatus(obj: KubeObject, all: Map<string, KubeObject>): unknown {
  const now = rfc3339(new Date());
  const spec = obj.spec as Record<string, unknown>;
  switch (obj.kind) {
    case 'PredictionEndpoint': {
      const models = ['1', '2']
        .map((id) => all.get(`DeployedModel/${obj.metadata.name ?? ''}-m${id}`))
        .filter((m): m is KubeObject => m !== undefined);
      return computePredictionEndpointStatus({
        endpoint: obj,
        models,
        states: resolveModelStates(models, () => true, new Map()),
        specErrors: [],
        modelReadiness: () => ({ status: 'True', reason: 'Reconciled' }),
        project: PROJECT,
        location: LOCATION,
        now,
      }).status;
    }
    case 'DeployedModel': {
      const endpoint = all.get(`PredictionEndpoint/${(spec.endpointRef as { name: string }).name}`) ?? obj;
      return computeDeployedModelStatus({
        model: obj,
        endpoint,
        state: { state: 'deployed', id: String(spec.id) },
        specErrors: [],
        backend: { state: 'none' },
        project: PROJECT,
        location: LOCATION,
        now,
      }).status;
    }
    case 'RegistryService': {
      const endpoints = [...all.values()].filter(
        (o) =>
          o.kind === 'RegistryEndpoint' &&
          String((o.spec as { name: string }).name).startsWith(`${String(spec.name)}/`),
      );
      return computeRegistryServiceStatus({
        service: obj,
        endpoints,
        specErrors: [],
        endpointErrors: () => [],
        reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
        now,
      }).status;
    }
    default:
      return computeRegistryEndpointStatus({
        endpoint: obj,
        parentExists: true,
        specErrors: [],
        reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
        now,
      }).status;
  }
}

/** Creates every object and writes its final status once, `concurrency` requests in flight; returns ms. */
export async function baseline(
  client: KubeClient,
  ns: string,
  items: readonly Item[],
  concurrency: number,
): Promise<number> {
  const all = new Map(items.map((i) => [`${i.body.kind ?? ''}/${i.body.metadata.name ?? ''}`, i.body]));
  const started = performance.now();
  await pool(items, concurrency, async (item) => {
    const created = await client.create<KubeObject>(item.ref, ns, item.body);
    await client.patch(
      item.ref,
      ns,
      created.metadata.name ?? '',
      { status: finalStatus(created, all) },
      { type: 'merge', subresource: 'status' },
    );
  });
  return performance.now() - started;
}
