/**
 * `endpoint_operator_resource_ready{kind, namespace, name}`: 1 while an object's `Ready` condition
 * is True, 0 otherwise (False, Unknown, or not written yet), read from the operator's informer
 * caches at scrape time, as kube-state-metrics reports `kube_pod_status_ready`. What the
 * "not Ready for 10 minutes" alert reads; every replica reports (its caches run without the lease).
 */
import { Gauge } from 'prom-client';
import type { Condition } from '../api/common/conditions.js';
import type { Informers } from '../reconcilers/context.js';
import type { KubeObject } from '../runtime/kube-object.js';
import { metricsRegistry } from '../runtime/metrics.js';

/** The kinds users declare (services and slices are the cluster's own). */
export const READINESS_KINDS = {
  predictionEndpoints: 'PredictionEndpoint',
  deployedModels: 'DeployedModel',
  registryServices: 'RegistryService',
  registryEndpoints: 'RegistryEndpoint',
} as const satisfies Partial<Record<keyof Informers, string>>;

type Cached = (kind: keyof typeof READINESS_KINDS) => readonly KubeObject[];

const sources = new Set<Cached>();

export function isReady(obj: KubeObject): boolean {
  const conditions = (obj as { status?: { conditions?: Condition[] } }).status?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

new Gauge({
  name: 'endpoint_operator_resource_ready',
  help: 'Whether the Ready condition of a PredictionEndpoint, DeployedModel, RegistryService or RegistryEndpoint is True (1) or not (0), by kind, namespace and name.',
  labelNames: ['kind', 'namespace', 'name'] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const cached of sources) {
      for (const [informer, kind] of Object.entries(READINESS_KINDS) as [keyof typeof READINESS_KINDS, string][]) {
        for (const obj of cached(informer)) {
          this.set({ kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' }, isReady(obj) ? 1 : 0);
        }
      }
    }
  },
});

/** Reports the objects `cached` returns until the returned function is called. */
export function reportReadiness(cached: Cached): () => void {
  sources.add(cached);
  return () => sources.delete(cached);
}
