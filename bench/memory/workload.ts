/**
 * The objects of the memory benchmark and how they are written: v1 only, names that encode their
 * relations (ep-7 owns ep-7-m1 and ep-7-m2; svc-3-ep-41 belongs to svc-3), bounded concurrency and a
 * few retries for the transient failures a loaded apiserver returns.
 */
import { allKinds } from '../../src/api/kinds.js';
import { ApiError, type KubeClient, type KubeObject, type ResourceRef } from '../../src/kube/kube-client.js';

export const PROJECT = 'bench-project';
export const LOCATION = 'europe-west4';
export const SERVICES = 10;

export type KindName = 'PredictionEndpoint' | 'DeployedModel' | 'RegistryService' | 'RegistryEndpoint';
export const KINDS: readonly KindName[] = [
  'PredictionEndpoint',
  'DeployedModel',
  'RegistryService',
  'RegistryEndpoint',
];

/** Built from the kind definitions (storage version) rather than the reconcilers' table, which this bench measures. */
export function refOf(kind: KindName): ResourceRef {
  const def = allKinds.find((k) => k.kind === kind);
  if (!def) throw new Error(`${kind} is not a registered kind`);
  return {
    group: def.group,
    version: def.versions.find((v) => v.storage)?.name ?? 'v1',
    plural: def.plural,
    namespaced: true,
  };
}

export interface WorkloadShape {
  readonly endpoints: number;
  readonly services: number;
  readonly registryEndpoints: number;
}

export function shapeOf(objects: number): WorkloadShape {
  const endpoints = Math.floor(objects / 4);
  return { endpoints, services: SERVICES, registryEndpoints: objects - 3 * endpoints - SERVICES };
}

export interface Write {
  readonly kind: KindName;
  readonly body: KubeObject;
}

export const SPLITS: readonly Record<string, number>[] = [
  { '1': 70, '2': 30 },
  { '1': 50, '2': 50 },
  { '1': 30, '2': 70 },
];

export function serviceName(s: number): string {
  return `projects/${PROJECT}/locations/${LOCATION}/namespaces/bench/services/svc-${s}`;
}

export function predictionEndpoint(i: number): Write {
  return {
    kind: 'PredictionEndpoint',
    body: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name: `ep-${i}`, labels: { 'app.kubernetes.io/part-of': 'bench' } },
      spec: {
        displayName: `Endpoint ${i}`,
        description: 'Scores customers by churn risk.',
        trafficSplit: SPLITS[i % SPLITS.length],
        labels: { team: 'growth', env: 'bench' },
      },
    },
  };
}

export function deployedModel(i: number, id: '1' | '2'): Write {
  return {
    kind: 'DeployedModel',
    body: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: `ep-${i}-m${id}` },
      spec: {
        endpointRef: { name: `ep-${i}` },
        id,
        model: `projects/${PROJECT}/locations/${LOCATION}/models/model-${id}`,
        displayName: `model ${id} of endpoint ${i}`,
        automaticResources: { minReplicaCount: 1, maxReplicaCount: 2 },
      },
    },
  };
}

export function registryService(s: number): Write {
  return {
    kind: 'RegistryService',
    body: {
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryService',
      metadata: { name: `svc-${s}` },
      spec: { name: serviceName(s), annotations: { 'example.com/owner': 'bench' } },
    },
  };
}

/** RegistryEndpoint j, under service j % SERVICES. */
export function registryEndpoint(j: number): Write {
  const s = j % SERVICES;
  return {
    kind: 'RegistryEndpoint',
    body: {
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryEndpoint',
      metadata: { name: `svc-${s}-ep-${j}` },
      spec: {
        name: `${serviceName(s)}/endpoints/ep-${j}`,
        address: `10.${(j >> 16) & 255}.${(j >> 8) & 255}.${j & 255}`,
        port: 8080,
        annotations: { 'example.com/shard': String(j % 7) },
      },
    },
  };
}

/** Every object, parents and children interleaved as a GitOps sync of many files delivers them. */
export function initialWorkload(shape: WorkloadShape): Write[] {
  const writes: Write[] = [];
  for (let s = 0; s < shape.services; s++) writes.push(registryService(s));
  for (let i = 0; i < Math.max(shape.endpoints, shape.registryEndpoints); i++) {
    if (i < shape.endpoints) {
      if (i % 2 === 0) writes.push(predictionEndpoint(i), deployedModel(i, '1'), deployedModel(i, '2'));
      else writes.push(deployedModel(i, '1'), deployedModel(i, '2'), predictionEndpoint(i));
    }
    if (i < shape.registryEndpoints) writes.push(registryEndpoint(i));
  }
  return writes;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Retries what a loaded apiserver or etcd may answer transiently (429, 5xx, a dropped connection); nothing else. */
export async function withRetry<T>(what: string, fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const transient = !(err instanceof ApiError) || err.status === 429 || err.status >= 500;
      if (!transient || attempt >= attempts)
        throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      await sleep(200 * 2 ** attempt);
    }
  }
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

export async function createAll(
  client: KubeClient,
  namespace: string,
  writes: readonly Write[],
  concurrency: number,
): Promise<void> {
  await pool(writes, concurrency, async (w) => {
    let tried = false;
    await withRetry(`create ${w.kind} ${w.body.metadata.name ?? ''}`, async () => {
      try {
        await client.create(refOf(w.kind), namespace, w.body);
      } catch (err) {
        // A retried create whose first attempt did reach etcd before the connection failed.
        if (tried && err instanceof ApiError && err.reason === 'AlreadyExists') return;
        throw err;
      } finally {
        tried = true;
      }
    });
  });
}
