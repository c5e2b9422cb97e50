/** The operator's pods and what fronts them: Deployment, Services, PodDisruptionBudget, ServiceMonitor. */
import { MACHINE_TYPES_CONFIGMAP } from './machine-types.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../webhook/settings.js';
import { tracingEnv } from './tracing.js';
import { canonicalJson } from '../api/prediction/v1/etag.js';
import { EPHEMERAL_TMP_LIMIT, NAME, commonLabels, placement, selectorLabels, type DeployValues, type SigninValues } from './values.js';

export const PORTS = { webhook: 9443, metrics: 8080, health: 8081 } as const;

/** Every container of the chart: the distroless image's non-root uid, read-only root, no capabilities (restricted PSS). */
export const HARDENED_CONTAINER = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** `endpoint-operator run` flags for the values; everything else keeps its default (see RUN_FLAGS). */
export function runArgs(values: DeployValues): string[] {
  return [
    'run',
    `--project=${values.project}`,
    `--location=${values.location}`,
    ...(values.gateway.url === '' ? [] : [`--gateway-url=${values.gateway.url}`]),
    `--gateway-tls-issuer=${values.gateway.tls.issuer}`,
    ...(values.gateway.tls.issuer === 'none' ? [] : [`--gateway-tls-secret=${values.gateway.tls.secretName}`]),
    ...values.reservedPrefixes.map((p) => `--reserved-prefix=${p}`),
    `--leader-elect=${values.leaderElection}`,
    `--webhook-port=${PORTS.webhook}`,
    `--metrics-port=${PORTS.metrics}`,
    `--health-port=${PORTS.health}`,
    `--machine-catalogue=${MACHINE_TYPES_CONFIGMAP}`,
    ...modelNetworkPolicyArgs(values),
    ...(values.signin.enabled ? signinArgs(values.signin) : []),
  ];
}

function modelNetworkPolicyArgs(values: DeployValues): string[] {
  const { enabled, extraIngressFrom } = values.modelNetworkPolicy;
  // Keys sorted, as Helm's toJson writes them: the chart renders the same argument.
  const extra = enabled && extraIngressFrom.length > 0 ? [`--model-network-policy-extra-from=${canonicalJson(extraIngressFrom)}`] : [];
  return [`--model-network-policy=${enabled}`, ...extra];
}

function signinArgs(signin: SigninValues): string[] {
  const l = signin.limits;
  return [
    '--signin=true', `--signin-namespace=${signin.namespace}`, `--signin-port=${signin.port}`,
    ...(signin.trustedProxies === '' ? [] : [`--signin-trusted-proxies=${signin.trustedProxies}`]),
    `--signin-headers-timeout=${l.headersTimeoutSeconds}`, `--signin-request-timeout=${l.requestTimeoutSeconds}`, `--signin-keep-alive-timeout=${l.keepAliveTimeoutSeconds}`,
    `--signin-max-connections=${l.maxConnections}`,
    `--signin-verify-concurrency=${l.verifyConcurrency}`, `--signin-verify-per-client=${l.verifyPerClient}`, `--signin-verify-queue=${l.verifyQueue}`,
  ];
}

/**
 * glibc's malloc gives a thread that finds the arenas busy one of its own, up to eight per core, and an arena keeps the
 * pages it has freed around pieces still in use. V8's platform threads, libuv's pool and OpenSSL allocate from
 * several threads, so the default leaves a mostly idle operator with many half-empty arenas; two hold the same
 * allocations in fewer pages. The memory benchmark (B3) runs the operator with this environment too.
 */
export const OPERATOR_MALLOC_ENV = [{ name: 'MALLOC_ARENA_MAX', value: '2' }] as const;

/**
 * Node's own flags for the operator process. `--optimize-for-size` (V8's Heap::ShouldOptimizeForMemoryUsage): a full
 * GC evacuates every old-space page that is a fifth free, up to 6 MB, where by default it picks pages by its measured
 * compaction speed, up to 4 MB; and the heap grows in smaller steps. Objects that change leave free slots scattered
 * over the pages, so without it the operator kept a quarter of its old space committed and empty after ten minutes
 * of churn (B3). It costs CPU while objects change; docs/benchmarks.md ("B3 after the churn") has both figures.
 * Only on the operator: the gateway shares the image and would pay it on every call. As with the gateway's flags,
 * V8 takes it only on node's command line, not in `NODE_OPTIONS`.
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--optimize-for-size'];

/** A container's command: the image's ENTRYPOINT (`node bin/endpoint-operator.js`) with node's own flags. */
export function imageCommand(nodeFlags: readonly string[]): string[] {
  return ['node', ...nodeFlags, 'bin/endpoint-operator.js'];
}

function fieldEnv(name: string, fieldPath: string): object {
  return { name, valueFrom: { fieldRef: { fieldPath } } };
}

function container(values: DeployValues): object {
  return {
    name: 'operator',
    image: `${values.image.repository}:${values.image.tag}`,
    imagePullPolicy: values.image.pullPolicy,
    command: imageCommand(OPERATOR_NODE_FLAGS),
    args: runArgs(values),
    // The operator's namespace (Lease, webhook Secret) and its Lease identity come from the pod itself.
    env: [fieldEnv('POD_NAMESPACE', 'metadata.namespace'), fieldEnv('POD_NAME', 'metadata.name'), ...OPERATOR_MALLOC_ENV, ...tracingEnv(values, NAME)],
    ports: [
      { name: 'webhook', containerPort: PORTS.webhook, protocol: 'TCP' },
      { name: 'metrics', containerPort: PORTS.metrics, protocol: 'TCP' },
      { name: 'health', containerPort: PORTS.health, protocol: 'TCP' },
      ...(values.signin.enabled ? [{ name: 'signin', containerPort: values.signin.port, protocol: 'TCP' }] : []),
    ],
    livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5, failureThreshold: 3 },
    resources: values.resources,
    securityContext: HARDENED_CONTAINER,
    // Node and libraries may still want a scratch directory; the root filesystem is read-only.
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  };
}

/**
 * kube-score's checks (github.com/zegl/kube-score, run on the chart by its tests) that a Deployment of the chart
 * answers rather than follows, as its own `kube-score/ignore` annotation:
 * - `container-resources` wants a CPU limit: CFS throttling of a process that is mostly idle only adds latency
 *   spikes (webhook reviews, gateway calls); the CPU request reserves the share, memory and ephemeral storage are
 *   limited;
 * - `container-image-pull-policy` wants `Always`, so that every pod start checks the pull credentials: the images
 *   are pinned by an immutable release tag, and `Always` would make every start (a drain, a scale-out) depend on
 *   the registry; set `image.pullPolicy: Always` (or the AlwaysPullImages admission plugin) where credentials must
 *   be re-checked, and the annotation leaves that check on;
 * - `pod-networkpolicy` wants an egress policy too (the chart's own policies are ingress only): the operator and the
 *   gateway call the kube-apiserver, which is no pod and whose address differs per cluster, and the gateway calls
 *   model servers in every namespace; an allow-all egress rule here would void a cluster's own default-deny egress
 *   policy, since policies only ever add what they admit. Only while the chart's ingress policy is on.
 */
export function kubeScoreIgnore(values: DeployValues, networkPolicy: boolean): { 'kube-score/ignore': string } {
  const checks = ['container-resources', ...(values.image.pullPolicy === 'Always' ? [] : ['container-image-pull-policy']), ...(networkPolicy ? ['pod-networkpolicy'] : [])];
  return { 'kube-score/ignore': checks.join(',') };
}

/** The `tmp` volume of every pod of the chart: Node and libraries may want a scratch directory; the root filesystem is read-only. */
export const TMP_VOLUME = { name: 'tmp', emptyDir: { sizeLimit: EPHEMERAL_TMP_LIMIT } };

export function deployment(values: DeployValues): object {
  const selector = selectorLabels();
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: values.namespace, labels: commonLabels('controller'), annotations: kubeScoreIgnore(values, values.networkPolicy.enabled) },
    spec: {
      replicas: values.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: commonLabels('controller') },
        spec: {
          serviceAccountName: NAME,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          ...placement(values),
          // Soft spreading: two replicas on different nodes when possible, still schedulable on one.
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } }],
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } }],
            },
          },
          terminationGracePeriodSeconds: 30,
          containers: [container(values)],
          volumes: [TMP_VOLUME],
        },
      },
    },
  };
}

function service(values: DeployValues, name: string, component: string, ports: object[]): object {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: values.namespace, labels: commonLabels(component) }, spec: { type: 'ClusterIP', selector: selectorLabels(), ports } };
}

export function services(values: DeployValues): object[] {
  return [
    // The name, port 443 and path prefixes are what the webhook configuration and CRD conversion point at.
    service(values, DEFAULT_WEBHOOK_SETTINGS.serviceName, 'webhook', [{ name: 'https', port: 443, targetPort: 'webhook', protocol: 'TCP' }]),
    service(values, `${NAME}-metrics`, 'metrics', [{ name: 'metrics', port: PORTS.metrics, targetPort: 'metrics', protocol: 'TCP' }]),
    ...(values.signin.enabled ? [service(values, `${NAME}-signin`, 'signin', [{ name: 'signin', port: values.signin.port, targetPort: 'signin', protocol: 'TCP' }])] : []),
  ];
}

export function podDisruptionBudget(values: DeployValues): object {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: NAME, namespace: values.namespace, labels: commonLabels('controller') },
    spec: { minAvailable: values.podDisruptionBudget.minAvailable, selector: { matchLabels: selectorLabels() } },
  };
}

export function serviceMonitor(values: DeployValues): object {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: NAME, namespace: values.namespace, labels: commonLabels('metrics') },
    spec: {
      // The operator's metrics Service and the gateway's: both are part of this instance and labelled "metrics".
      selector: { matchLabels: { 'app.kubernetes.io/instance': NAME, 'app.kubernetes.io/part-of': NAME, 'app.kubernetes.io/component': 'metrics' } },
      // /metrics needs a bearer token whose user may get the URL /metrics (ClusterRole endpoint-operator-metrics-reader,
      // bound to Prometheus' ServiceAccount): Prometheus sends its own ServiceAccount token. honorLabels: the gateway's
      // `namespace` and `endpoint` labels name the called PredictionEndpoint, and must not be renamed exported_* under
      // the target labels prometheus-operator adds (the scraped pod's namespace, the port's name).
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s', honorLabels: true, bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }],
    },
  };
}

/**
 * Who may reach the operator's pods (ingress only; kubeScoreIgnore says why not egress): the webhook port the
 * kube-apiserver (`networkPolicy.webhookFrom`), the metrics port the scraper (`metricsFrom`), the health port and the
 * sign-in port anyone (the kubelet's probes; sign-in clients through an ingress). A list that is empty admits no one.
 */
export function operatorNetworkPolicy(values: DeployValues): object {
  const { webhookFrom, metricsFrom } = values.networkPolicy;
  const rule = (from: object[], port: string): object[] => (from.length === 0 ? [] : [{ from, ports: [{ port, protocol: 'TCP' }] }]);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: NAME, namespace: values.namespace, labels: commonLabels('controller') },
    spec: {
      podSelector: { matchLabels: selectorLabels() },
      policyTypes: ['Ingress'],
      ingress: [
        ...rule(webhookFrom, 'webhook'),
        ...rule(metricsFrom, 'metrics'),
        { ports: [{ port: 'health', protocol: 'TCP' }, ...(values.signin.enabled ? [{ port: 'signin', protocol: 'TCP' }] : [])] },
      ],
    },
  };
}
