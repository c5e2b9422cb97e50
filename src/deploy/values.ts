import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { DEFAULT_PROJECT_TEMPLATE } from '../api/prediction/v1/names.js';
import { DEFAULT_AUTH_SETTINGS } from '../gateway/auth/settings.js';
import { DEFAULT_MAX_BODY_BYTES_PER_CALLER, DEFAULT_MAX_CALLS_PER_CALLER } from '../gateway/fairness.js';
import { GATEWAY_SERVER_LIMITS, SIGNIN_SERVER_LIMITS, type ServerLimits } from '../http/server-limits.js';
import { DEFAULT_VERIFICATION_LIMITS } from '../signin/verification-queue.js';
import type { NetworkPolicyPeer } from '../api/common/network-policy-peer.js';
import type { Toleration } from '../api/prediction/v1/machine-catalogue.js';
import type { ArtifactBucketSpec } from '../api/prediction/v1/artifact-bucket.js';

/**
 * Everything an installation can vary, in one object: the generator turns it into manifests, and
 * the Helm chart's values.yaml carries the same keys and defaults (a unit test keeps them equal).
 */
export interface DeployValues {
  /** The operator's own namespace: Lease, webhook Secret, Services. */
  namespace: string;
  /**
   * The CRDs, as chart templates (src/deploy/crd-templates.ts) so that `helm upgrade` delivers their changes:
   * `enabled` off leaves them to whoever manages the cluster's CRDs; `keep` annotates them
   * `helm.sh/resource-policy: keep`, so `helm uninstall` does not delete them and every custom resource with them.
   */
  crds: { enabled: boolean; keep: boolean };
  image: { repository: string; tag: string; pullPolicy: 'Always' | 'IfNotPresent' | 'Never' };
  replicas: number;
  /**
   * `--project` / `--location`: the PredictionEndpoint status.name prefix. `project` is a template in
   * which `{namespace}` is replaced and must appear, so that names are unique in the cluster.
   */
  project: string;
  location: string;
  /** The data plane (`endpoint-operator gateway`): stateless, every replica serves, no leader election. */
  gateway: GatewayValues;
  /** `--reserved-prefix`: annotation prefixes kept but ignored by validation. */
  reservedPrefixes: string[];
  /** `--leader-elect`: one active replica of the controllers (every replica serves webhooks). */
  leaderElection: boolean;
  /** The point-of-sale sign-in API; `namespace` holds the Shops, users and their password Secrets. */
  signin: SigninValues;
  resources: ResourceValues;
  /**
   * The operator pods' NetworkPolicy (ingress; egress stays the cluster's: see operatorNetworkPolicy in workload.ts):
   * the webhook port admits `webhookFrom` (the kube-apiserver, which is no pod: its address differs per cluster, so
   * anywhere by default), the metrics port `metricsFrom` (the metrics scraper), the health port anyone (the
   * kubelet's probes), the sign-in port anyone (its clients come through an ingress). An empty list admits no one.
   */
  networkPolicy: { enabled: boolean; webhookFrom: NetworkPolicyPeer[]; metricsFrom: NetworkPolicyPeer[] };
  /** A prometheus-operator ServiceMonitor for the metrics Service (needs its CRD). */
  serviceMonitor: { enabled: boolean };
  /**
   * OpenTelemetry tracing of the operator and the gateway (OTEL_* environment): spans go over
   * OTLP/HTTP to `otlpEndpoint` ('' = off); `sampler`/`samplerArg` are OTEL_TRACES_SAMPLER and _ARG.
   */
  tracing: { otlpEndpoint: string; sampler: string; samplerArg: string };
  /**
   * `prometheusRule`: a prometheus-operator PrometheusRule with the alerts of src/deploy/alerts.ts
   * (needs its CRD); `grafanaDashboard`: a ConfigMap labelled `grafana_dashboard: "1"` holding the
   * dashboard of src/deploy/dashboard.ts, for Grafana's dashboard sidecar.
   */
  metrics: { prometheusRule: { enabled: boolean }; grafanaDashboard: { enabled: boolean } };
  podDisruptionBudget: { minAvailable: number };
  /**
   * `--model-network-policy`: a NetworkPolicy per DeployedModel with containerSpec admits ingress to its pods only
   * from the gateway's pods, so no pod reaches a model past the gateway's authentication; `extraIngressFrom`
   * (NetworkPolicyPeers, e.g. a metrics scraper) are admitted on every port. Enforced only by the cluster's policy
   * engine (Calico, Cilium, kube-router...). Off: the operator deletes the policies it made.
   */
  modelNetworkPolicy: { enabled: boolean; extraIngressFrom: NetworkPolicyPeer[] };
  /**
   * The bucket map: one ModelArtifactBucket per key (the Cloud Storage bucket's name), its value the object's spec
   * (`oci: {repository}` or `pvc: {claimName}`), so `gs://{bucket}/...` artifacts are served (docs/models.md).
   */
  modelArtifactBuckets: Record<string, ArtifactBucketSpec>;
  /** The operator's pods: the nodes they may run on (pod spec `nodeSelector`, `tolerations`); empty = any node. */
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
}

/** A port's time and connection limits (src/http/server-limits.ts), in the flags' units: seconds. */
export interface PortLimitValues {
  headersTimeoutSeconds: number;
  requestTimeoutSeconds: number;
  keepAliveTimeoutSeconds: number;
  maxConnections: number;
}

export interface SigninValues {
  enabled: boolean;
  namespace: string;
  port: number;
  /** `--signin-trusted-proxies`: hop count or CIDRs of the ingress in front; '' trusts no X-Forwarded-For. */
  trustedProxies: string;
  /**
   * `--signin-*-timeout`, `--signin-max-connections` and the fair password verifications
   * (`--signin-verify-*`; src/signin/verification-queue.ts): `verifyConcurrency` 0 = the cores.
   */
  limits: PortLimitValues & { verifyConcurrency: number; verifyPerClient: number; verifyQueue: number };
}

export interface GatewayValues {
  replicas: number;
  /** `--gateway-url` of the operator (status.url); '' = the gateway Service, https://endpoint-operator-gateway.{namespace}.svc (http:// without TLS). */
  url: string;
  /**
   * The API port's TLS (gRPC and REST on one port, as Google's clients expect). `issuer`: `operator` (the operator
   * issues the certificate into Secret `secretName` and rotates it), `external` (another issuer writes that Secret,
   * e.g. a cert-manager Certificate with `secretName` and the Service's DNS names; keys tls.crt, tls.key, ca.crt),
   * or `none` (plain HTTP: only behind a mesh or ingress that terminates TLS). The gateway mounts the Secret and
   * follows its rotation; unless `none`, the CA is published as ConfigMap endpoint-operator-gateway-ca.crt.
   */
  tls: { issuer: 'operator' | 'external' | 'none'; secretName: string };
  resources: ResourceValues;
  /**
   * Besides authentication (`auth`), the gateway is a ClusterIP Service; this NetworkPolicy further admits its API
   * port only from pods of namespaces carrying the label `clientNamespaceLabel: "true"`, or of every namespace when
   * it is '' (health and metrics stay reachable for probes and scraping).
   */
  networkPolicy: { enabled: boolean; clientNamespaceLabel: string };
  /**
   * `--request-log-sink`: an HTTP(S) URL that sampled calls (predictRequestResponseLoggingConfig) are
   * also sent to as KServe-compatible CloudEvents (a Knative broker, any collector); '' = only the log.
   */
  requestLogSink: string;
  /**
   * Vertex's write API on the gateway (ModelService, EndpointService writes: docs/clients.md). true: its
   * ServiceAccount may get/list/watch/create/patch/delete models, predictionendpoints and deployedmodels (no other
   * kind, no impersonate) and get namespaces (the refuse annotation); false: no write rights are rendered and every
   * write method answers FAILED_PRECONDITION naming this value.
   */
  apiWrites: { enabled: boolean };
  /**
   * `--auth*` of the gateway (src/cli/gateway-auth-flags.ts): `mode` token-review (TokenReview with
   * `audiences` + SubjectAccessReview) or none; decision cache windows in seconds, cache size, and
   * the bound on reviews sent to the kube-apiserver.
   */
  auth: {
    mode: 'token-review' | 'none';
    audiences: string[];
    tokenTTLSeconds: number;
    tokenFailureTTLSeconds: number;
    accessTTLSeconds: number;
    accessDenyTTLSeconds: number;
    cacheSize: number;
    maxReviewsInFlight: number;
    reviewsPerSecond: number;
  };
  /**
   * The API port's limits (`--headers-timeout`, `--request-timeout`, `--keep-alive-timeout`,
   * `--max-connections`) and the per-caller fairness bounds (`--max-calls-per-caller`,
   * `--max-body-bytes-per-caller`; src/gateway/fairness.ts).
   */
  limits: PortLimitValues & { maxCallsPerCaller: number; maxBodyBytesPerCaller: number };
  /** The gateway's pods: the nodes they may run on (pod spec `nodeSelector`, `tolerations`); empty = any node. */
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
  /**
   * Voluntary disruptions (a node drain, an eviction) take at most this many gateway pods at once. Right at every
   * size the autoscaler picks: a minAvailable would have to follow the replica count (too low at ten replicas, a
   * drain that never ends at one).
   */
  podDisruptionBudget: { maxUnavailable: number };
  /**
   * A HorizontalPodAutoscaler (autoscaling/v2) on the gateway's CPU: `targetCPUUtilizationPercentage` of the CPU
   * requested, between `minReplicas` and `maxReplicas`. On, the Deployment has no `replicas` (the HPA owns it, and
   * an upgrade must not reset it); off, `replicas` is the count. `scaleDownStabilizationSeconds` is the HPA's
   * `behavior.scaleDown.stabilizationWindowSeconds`: it scales down to the highest count it wanted over that window
   * (Kubernetes' default, 300, keeps a fleet through a short lull; a test wants its scale-down sooner).
   */
  autoscaling: { enabled: boolean; minReplicas: number; maxReplicas: number; targetCPUUtilizationPercentage: number; scaleDownStabilizationSeconds: number };
}

/** A container's requests and limits. No CPU limit: CFS throttling of a process that is mostly idle only adds latency spikes. */
export interface ResourceValues {
  requests: { cpu: string; memory: string; 'ephemeral-storage': string };
  limits: { memory: string; 'ephemeral-storage': string };
}

/**
 * What a container may write outside its volumes' limits: /tmp (an emptyDir of 64Mi, EPHEMERAL_TMP_LIMIT) and the
 * container's log, which the kubelet rotates at 10Mi, five files (its defaults); the root filesystem is read-only.
 */
const EPHEMERAL_STORAGE = { request: '64Mi', limit: '256Mi' } as const;
export const EPHEMERAL_TMP_LIMIT = '64Mi';

/** ServerLimits in the flags' units. */
function portLimitValues(limits: ServerLimits): PortLimitValues {
  return {
    headersTimeoutSeconds: limits.headersTimeoutMs / 1000,
    requestTimeoutSeconds: limits.requestTimeoutMs / 1000,
    keepAliveTimeoutSeconds: limits.keepAliveTimeoutMs / 1000,
    maxConnections: limits.maxConnections,
  };
}

export const DEFAULT_DEPLOY_VALUES: DeployValues = {
  namespace: 'endpoint-operator-system',
  crds: { enabled: true, keep: true },
  image: { repository: 'ghcr.io/endpoint-operator/endpoint-operator', tag: '0.1.0', pullPolicy: 'IfNotPresent' },
  replicas: 2,
  project: DEFAULT_PROJECT_TEMPLATE,
  location: 'us-central1',
  gateway: {
    replicas: 2,
    url: '',
    tls: { issuer: 'operator', secretName: 'endpoint-operator-gateway-tls' },
    // Under B6-fair (a caller looping large bodies) the gateway's RSS went over the 256Mi this limit was (figures
    // in bench/results.json): the bodies in flight, their copies in the JSON workers' isolates, and V8 starting no
    // mark-compact below the old generation GATEWAY_NODE_FLAGS sets. 512Mi leaves room for that and a burst.
    resources: {
      requests: { cpu: '100m', memory: '128Mi', 'ephemeral-storage': EPHEMERAL_STORAGE.request },
      limits: { memory: '512Mi', 'ephemeral-storage': EPHEMERAL_STORAGE.limit },
    },
    networkPolicy: { enabled: true, clientNamespaceLabel: '' },
    requestLogSink: '',
    apiWrites: { enabled: true },
    auth: {
      mode: DEFAULT_AUTH_SETTINGS.mode,
      audiences: [...DEFAULT_AUTH_SETTINGS.audiences],
      tokenTTLSeconds: DEFAULT_AUTH_SETTINGS.tokenSuccessTtlMs / 1000,
      tokenFailureTTLSeconds: DEFAULT_AUTH_SETTINGS.tokenFailureTtlMs / 1000,
      accessTTLSeconds: DEFAULT_AUTH_SETTINGS.accessAllowTtlMs / 1000,
      accessDenyTTLSeconds: DEFAULT_AUTH_SETTINGS.accessDenyTtlMs / 1000,
      cacheSize: DEFAULT_AUTH_SETTINGS.cacheEntries,
      maxReviewsInFlight: DEFAULT_AUTH_SETTINGS.maxReviewsInFlight,
      reviewsPerSecond: DEFAULT_AUTH_SETTINGS.reviewsPerSecond,
    },
    limits: { ...portLimitValues(GATEWAY_SERVER_LIMITS), maxCallsPerCaller: DEFAULT_MAX_CALLS_PER_CALLER, maxBodyBytesPerCaller: DEFAULT_MAX_BODY_BYTES_PER_CALLER },
    nodeSelector: {},
    tolerations: [],
    podDisruptionBudget: { maxUnavailable: 1 },
    // 70 %: headroom for a burst while a new replica is scheduled and becomes Ready.
    autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 70, scaleDownStabilizationSeconds: 300 },
  },
  reservedPrefixes: [...DEFAULT_RESERVED_PREFIXES],
  leaderElection: true,
  signin: {
    enabled: false,
    namespace: 'endpoint-demo',
    port: 8443,
    trustedProxies: '',
    limits: { ...portLimitValues(SIGNIN_SERVER_LIMITS), verifyConcurrency: 0, verifyPerClient: DEFAULT_VERIFICATION_LIMITS.perClient, verifyQueue: DEFAULT_VERIFICATION_LIMITS.queueLength },
  },
  // No CPU limit: CFS throttling of a mostly idle process only adds webhook latency spikes.
  resources: {
    requests: { cpu: '100m', memory: '128Mi', 'ephemeral-storage': EPHEMERAL_STORAGE.request },
    limits: { memory: '256Mi', 'ephemeral-storage': EPHEMERAL_STORAGE.limit },
  },
  networkPolicy: {
    enabled: true,
    webhookFrom: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }],
    // kube-prometheus-stack's and prometheus-operator's usual namespace.
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  },
  serviceMonitor: { enabled: false },
  tracing: { otlpEndpoint: '', sampler: 'parentbased_traceidratio', samplerArg: '0.01' },
  metrics: { prometheusRule: { enabled: false }, grafanaDashboard: { enabled: false } },
  podDisruptionBudget: { minAvailable: 1 },
  modelNetworkPolicy: { enabled: true, extraIngressFrom: [] },
  modelArtifactBuckets: {},
  nodeSelector: {},
  tolerations: [],
};

export const NAME = 'endpoint-operator';

/** A pod spec's `nodeSelector` and `tolerations` for the values, each left out when empty (as the chart's `with`). */
export function placement(p: { nodeSelector: Record<string, string>; tolerations: Toleration[] }): object {
  return {
    ...(Object.keys(p.nodeSelector).length > 0 ? { nodeSelector: p.nodeSelector } : {}),
    ...(p.tolerations.length > 0 ? { tolerations: p.tolerations } : {}),
  };
}

/** Labels on everything; the selector subset picks the operator's pods. */
export function selectorLabels(): Record<string, string> {
  return { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/instance': NAME };
}

export function commonLabels(component?: string): Record<string, string> {
  return { ...selectorLabels(), 'app.kubernetes.io/part-of': NAME, ...(component ? { 'app.kubernetes.io/component': component } : {}) };
}

export const GATEWAY_NAME = `${NAME}-gateway`;

/** What picks the gateway's pods: not the operator's selector, which would adopt them. */
export function gatewaySelectorLabels(): Record<string, string> {
  return { 'app.kubernetes.io/name': GATEWAY_NAME, 'app.kubernetes.io/instance': NAME };
}

export function gatewayLabels(): Record<string, string> {
  return { ...gatewaySelectorLabels(), 'app.kubernetes.io/part-of': NAME, 'app.kubernetes.io/component': 'gateway' };
}

/** The in-cluster URL of the gateway Service (port 443 with TLS, else 80): the default `--gateway-url` of `run`. */
export function defaultGatewayUrl(namespace: string, tls: boolean): string {
  return `${tls ? 'https' : 'http'}://${GATEWAY_NAME}.${namespace}.svc`;
}
