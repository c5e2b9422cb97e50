/** Chart values the chart tests share: every option on (chart.test.ts, kube-score.test.ts). */
import { DEFAULT_DEPLOY_VALUES, type DeployValues } from '../../../src/deploy/values.js';

/** Every `enabled: false` switch turned on, wherever it sits in the values. */
function everySwitchOn(values: unknown): unknown {
  if (Array.isArray(values) || values === null || typeof values !== 'object') return values;
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, k === 'enabled' && v === false ? true : everySwitchOn(v)]));
}

/** Every option off its default, as far as the values allow at once. */
export const EVERY_OPTION_ON: DeployValues = {
  ...(everySwitchOn(DEFAULT_DEPLOY_VALUES) as DeployValues),
  namespace: 'ops',
  replicas: 3,
  leaderElection: false,
  image: { repository: 'registry.example.com/eo', tag: '1.2.3', pullPolicy: 'Always' as const },
  project: 'acme-{namespace}',
  location: 'europe-west4',
  reservedPrefixes: ['a.example.com', 'b.example.com'],
  podDisruptionBudget: { minAvailable: 2 },
  nodeSelector: { 'example.com/pool': 'system' },
  tolerations: [{ key: 'example.com/dedicated', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
  networkPolicy: { enabled: true, webhookFrom: [{ ipBlock: { cidr: '10.0.0.0/24' } }], metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }] },
  tracing: { otlpEndpoint: 'http://otel-collector.monitoring:4318', sampler: 'always_on', samplerArg: '1' },
  // A metrics scraper's pods (keys out of order: the flag carries them sorted, as Helm's toJson writes them).
  modelNetworkPolicy: { enabled: true, extraIngressFrom: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } }, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
  // The bucket map: one object per bucket, both forms.
  modelArtifactBuckets: { 'demo-models': { oci: { repository: 'registry.example.com/demo-models' } }, 'shared-store': { pvc: { claimName: 'model-store' } } },
  // Limits off their defaults, with counts of a million and more (Helm reads them as float64) and fractional seconds.
  signin: {
    enabled: true, namespace: 'shops', port: 9443, trustedProxies: '10.0.0.0/8,fd00::/8',
    limits: { headersTimeoutSeconds: 2.5, requestTimeoutSeconds: 20, keepAliveTimeoutSeconds: 4, maxConnections: 2_000_000, verifyConcurrency: 3, verifyPerClient: 2, verifyQueue: 64 },
  },
  gateway: {
    ...(everySwitchOn(DEFAULT_DEPLOY_VALUES) as DeployValues).gateway, replicas: 3, url: 'https://predict.example.com', requestLogSink: 'http://broker-ingress.knative-eventing.svc/ml/default', networkPolicy: { enabled: true, clientNamespaceLabel: 'example.com/ml-clients' },
    limits: { headersTimeoutSeconds: 5, requestTimeoutSeconds: 120, keepAliveTimeoutSeconds: 30, maxConnections: 10_000, maxCallsPerCaller: 16, maxBodyBytesPerCaller: 12_000_000 },
    nodeSelector: { 'example.com/pool': 'serving' },
    podDisruptionBudget: { maxUnavailable: 2 },
    autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 12, targetCPUUtilizationPercentage: 60, scaleDownStabilizationSeconds: 45 },
    tolerations: [{ key: 'example.com/dedicated', operator: 'Equal' as const, value: 'serving', effect: 'NoSchedule' as const }],
  },
};

