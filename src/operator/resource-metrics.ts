/**
 * State of the declared resources, read from the operator's informer caches at scrape time, as
 * kube-state-metrics reports `kube_pod_status_ready` (every replica reports: its caches run without
 * the lease):
 * - `endpoint_operator_resource_ready{kind, namespace, name}`: 1 while the `Ready` condition is
 *   True, 0 otherwise (False, Unknown, or not written yet); what the "not Ready for 10 minutes" alert reads;
 * - `endpoint_operator_traffic_split_percent{namespace, endpoint, deployed_model}`: a
 *   PredictionEndpoint's declared `spec.trafficSplit`, which the dashboard sets beside the realised split.
 */
import { Gauge } from 'prom-client';
import type { Condition } from '../api/common/conditions.js';
import { kindBindings, reconciledKinds, type ReconciledKind } from '../api/kind-bindings.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { metricsRegistry } from '../base/metrics.js';

/** The objects of a kind users declare (services and slices are the cluster's own) in the caches. */
type Cached = (kind: ReconciledKind) => readonly KubeObject[];

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
      for (const which of reconciledKinds) {
        const { kind } = kindBindings[which];
        for (const obj of cached(which)) {
          this.set(
            { kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' },
            isReady(obj) ? 1 : 0,
          );
        }
      }
    }
  },
});

new Gauge({
  name: 'endpoint_operator_traffic_split_percent',
  help: 'The traffic split a PredictionEndpoint declares (spec.trafficSplit), by namespace, endpoint (metadata.name) and deployed model id.',
  labelNames: ['namespace', 'endpoint', 'deployed_model'] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const cached of sources) {
      for (const obj of cached('predictionEndpoints')) {
        const split = (obj as { spec?: { trafficSplit?: Record<string, unknown> } }).spec?.trafficSplit ?? {};
        for (const [id, percent] of Object.entries(split)) {
          if (typeof percent === 'number')
            this.set(
              { namespace: obj.metadata.namespace ?? '', endpoint: obj.metadata.name ?? '', deployed_model: id },
              percent,
            );
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
