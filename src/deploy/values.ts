import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';

/**
 * Everything an installation can vary, in one object: the generator turns it into manifests, and
 * the Helm chart's values.yaml carries the same keys and defaults (a unit test keeps them equal).
 */
export interface DeployValues {
  /** The operator's own namespace: Lease, webhook Secret, Services. */
  namespace: string;
  image: { repository: string; tag: string; pullPolicy: 'Always' | 'IfNotPresent' | 'Never' };
  replicas: number;
  /** `--project` / `--location`: the PredictionEndpoint status.name prefix. */
  project: string;
  location: string;
  /** `--reserved-prefix`: annotation prefixes kept but ignored by validation. */
  reservedPrefixes: string[];
  /** `--leader-elect`: one active replica of the controllers (every replica serves webhooks). */
  leaderElection: boolean;
  /** The point-of-sale sign-in API; `namespace` holds the Shops, users and their password Secrets. */
  signin: { enabled: boolean; namespace: string; port: number };
  resources: { requests: { cpu: string; memory: string }; limits: { memory: string } };
  /** A prometheus-operator ServiceMonitor for the metrics Service (needs its CRD). */
  serviceMonitor: { enabled: boolean };
  podDisruptionBudget: { minAvailable: number };
}

export const DEFAULT_DEPLOY_VALUES: DeployValues = {
  namespace: 'endpoint-operator-system',
  image: { repository: 'ghcr.io/endpoint-operator/endpoint-operator', tag: '0.1.0', pullPolicy: 'IfNotPresent' },
  replicas: 2,
  project: 'endpoint-operator',
  location: 'us-central1',
  reservedPrefixes: [...DEFAULT_RESERVED_PREFIXES],
  leaderElection: true,
  signin: { enabled: false, namespace: 'endpoint-demo', port: 8443 },
  // No CPU limit: CFS throttling of a mostly idle process only adds webhook latency spikes.
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
  serviceMonitor: { enabled: false },
  podDisruptionBudget: { minAvailable: 1 },
};

export const NAME = 'endpoint-operator';

/** Labels on everything; the selector subset picks the operator's pods. */
export function selectorLabels(): Record<string, string> {
  return { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/instance': NAME };
}

export function commonLabels(component?: string): Record<string, string> {
  return { ...selectorLabels(), 'app.kubernetes.io/part-of': NAME, ...(component ? { 'app.kubernetes.io/component': component } : {}) };
}
