/**
 * The data plane's objects: `endpoint-operator gateway` as a stateless Deployment (every replica
 * serves, no leader election), its ClusterIP Service, its own ServiceAccount with read-only RBAC
 * (plus creating TokenReviews and SubjectAccessReviews: every call is authenticated and authorised by
 * the cluster), and an optional NetworkPolicy.
 */
import type { PolicyRule } from './rbac.js';
import { HARDENED_CONTAINER, imageCommand, kubeScoreIgnore, TMP_VOLUME } from './workload.js';
import { GATEWAY_NAME, gatewayLabels, gatewaySelectorLabels, placement, type DeployValues } from './values.js';
import { tracingEnv } from './tracing.js';

export const GATEWAY_PORTS = { http: 8090, health: 8091 } as const;
/** The Service port, the scheme's default (the default `--gateway-url` has no port): 443 with TLS, 80 without. */
export function gatewayServicePort(values: DeployValues): { name: 'https' | 'http'; port: 443 | 80 } {
  return values.gateway.tls.issuer === 'none' ? { name: 'http', port: 80 } : { name: 'https', port: 443 };
}
/**
 * How long a gateway pod keeps serving after its deletion before it gets SIGTERM (a preStop `sleep`, KEP-3960:
 * the image needs no shell). The pod leaves the Service's EndpointSlices when it is deleted, but every kube-proxy
 * (and any ingress) applies that a moment later; until then new connections still reach this pod, and a server
 * that closed its listener at once would refuse them. SIGTERM then closes the idle kept-alive connections,
 * whose clients reconnect to the remaining pods, and lets the calls in flight finish.
 */
export const GATEWAY_PRESTOP_SECONDS = 5;
/** The gateway pods' terminationGracePeriodSeconds: the preStop sleep, then the process's own shutdown. */
export const GATEWAY_GRACE_SECONDS = 30;
/** Where the gateway's pods mount its certificate Secret (kubelet updates the files on rotation). */
export const GATEWAY_TLS_MOUNT = '/etc/endpoint-operator/gateway-tls';

/**
 * Node's own flags for the gateway process. `--single-threaded-gc`: beside a caller looping large bodies
 * the main heap mark-compacts often, and V8's platform threads doing concurrent marking at the process's
 * priority take the cores the event loop waits for; marking on the main thread keeps other callers'
 * latency down. `--initial-old-space-size=128` (MB): V8 then starts no mark-compact while the old
 * generation, with the external (Buffer) memory allocated since the last one, stays under 128 MB, instead
 * of a limit just above the small live heap that in-flight bodies cross several times a second; it costs
 * some peak RSS (hence the chart's memory limit). V8 takes these flags only on node's command line:
 * `NODE_OPTIONS` refuses them and `v8.setFlagsFromString` aborts Node 20 (cppgc). The measurements (B6-fair)
 * are in docs/hostile-input.md and bench/results.json.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--single-threaded-gc', '--initial-old-space-size=128'];

/** `endpoint-operator gateway` flags; everything else keeps its default (see the gateway's flags). */
export function gatewayArgs(values: DeployValues): string[] {
  const a = values.gateway.auth;
  const l = values.gateway.limits;
  return [
    'gateway', `--port=${GATEWAY_PORTS.http}`, `--health-port=${GATEWAY_PORTS.health}`,
    // The namespace of a prediction call is read from its path with the operator's project template.
    `--project=${values.project}`,
    `--auth=${a.mode}`, `--auth-audiences=${a.audiences.join(',')}`,
    `--auth-token-ttl=${a.tokenTTLSeconds}`, `--auth-token-failure-ttl=${a.tokenFailureTTLSeconds}`,
    `--auth-access-ttl=${a.accessTTLSeconds}`, `--auth-access-deny-ttl=${a.accessDenyTTLSeconds}`,
    `--auth-cache-size=${a.cacheSize}`, `--auth-max-reviews-in-flight=${a.maxReviewsInFlight}`, `--auth-reviews-per-second=${a.reviewsPerSecond}`,
    `--headers-timeout=${l.headersTimeoutSeconds}`, `--request-timeout=${l.requestTimeoutSeconds}`, `--keep-alive-timeout=${l.keepAliveTimeoutSeconds}`,
    `--max-connections=${l.maxConnections}`, `--max-calls-per-caller=${l.maxCallsPerCaller}`, `--max-body-bytes-per-caller=${l.maxBodyBytesPerCaller}`,
    ...(values.gateway.apiWrites.enabled ? [] : ['--api-writes=false']),
    ...(values.gateway.tls.issuer === 'none' ? ['--plain-http'] : [`--tls-cert-file=${GATEWAY_TLS_MOUNT}/tls.crt`, `--tls-key-file=${GATEWAY_TLS_MOUNT}/tls.key`]),
  ];
}

/**
 * Only what the gateway reads: endpoints, deployed models and models (routes, splits, Vertex's reads), Services and
 * EndpointSlices (where the model servers are; v1 and v1beta1 share the group), and the registry kinds for the Service
 * Directory lookup. With gateway.apiWrites.enabled (Vertex's write API, docs/clients.md) it also writes the three
 * prediction kinds it serves, and nothing else: no other kind, no `impersonate` (each write was authorised as its
 * caller by a SubjectAccessReview first), plus `get` on namespaces for the refuse annotation.
 */
export function gatewayRules(apiWrites = true): PolicyRule[] {
  const read = ['get', 'list', 'watch'];
  const prediction = ['predictionendpoints', 'deployedmodels', 'models'];
  return [
    { apiGroups: ['prediction.endpoint-operator.dev'], resources: prediction, verbs: apiWrites ? [...read, 'create', 'patch', 'delete'] : read },
    ...(apiWrites ? [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }] : []),
    { apiGroups: ['registry.endpoint-operator.dev'], resources: ['registryservices', 'registryendpoints'], verbs: read },
    { apiGroups: [''], resources: ['services'], verbs: read },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: read },
    // Every call is authenticated (TokenReview) and authorised (SubjectAccessReview) by the cluster.
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}

/** OTEL_* (tracing) and the CloudEvents sink of sampled calls. */
function gatewayEnv(values: DeployValues): { name: string; value: string }[] {
  const sink = values.gateway.requestLogSink;
  return [...tracingEnv(values, GATEWAY_NAME), ...(sink === '' ? [] : [{ name: 'EO_GATEWAY_REQUEST_LOG_SINK', value: sink }])];
}

function gatewayContainer(values: DeployValues): object {
  return {
    name: 'gateway',
    image: `${values.image.repository}:${values.image.tag}`,
    imagePullPolicy: values.image.pullPolicy,
    command: imageCommand(GATEWAY_NODE_FLAGS),
    args: gatewayArgs(values),
    ...(gatewayEnv(values).length > 0 ? { env: gatewayEnv(values) } : {}),
    ports: [
      { name: 'http', containerPort: GATEWAY_PORTS.http, protocol: 'TCP' },
      { name: 'health', containerPort: GATEWAY_PORTS.health, protocol: 'TCP' },
    ],
    livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5, failureThreshold: 3 },
    lifecycle: { preStop: { sleep: { seconds: GATEWAY_PRESTOP_SECONDS } } },
    resources: values.gateway.resources,
    securityContext: HARDENED_CONTAINER,
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }, ...(values.gateway.tls.issuer === 'none' ? [] : [{ name: 'tls', mountPath: GATEWAY_TLS_MOUNT, readOnly: true }])],
  };
}

export function gatewayManifests(values: DeployValues): object[] {
  const ns = values.namespace;
  const labels = gatewayLabels();
  const selector = gatewaySelectorLabels();
  const cluster = { name: GATEWAY_NAME, labels };
  const objects: object[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: GATEWAY_NAME, namespace: ns, labels } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: cluster, rules: gatewayRules(values.gateway.apiWrites.enabled) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: cluster,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: GATEWAY_NAME },
      subjects: [{ kind: 'ServiceAccount', name: GATEWAY_NAME, namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: GATEWAY_NAME, namespace: ns, labels },
      spec: { type: 'ClusterIP', selector, ports: [{ ...gatewayServicePort(values), targetPort: 'http', protocol: 'TCP' }] },
    },
    {
      // What the ServiceMonitor scrapes (component "metrics", as the operator's metrics Service): the gateway's
      // /metrics is on its health port, which the client-facing Service above does not expose.
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `${GATEWAY_NAME}-metrics`, namespace: ns, labels: { ...labels, 'app.kubernetes.io/component': 'metrics' } },
      spec: { type: 'ClusterIP', selector, ports: [{ name: 'metrics', port: GATEWAY_PORTS.health, targetPort: 'health', protocol: 'TCP' }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: GATEWAY_NAME, namespace: ns, labels, annotations: kubeScoreIgnore(values, values.gateway.networkPolicy.enabled) },
      spec: {
        // With the HPA on, it owns the count: a `replicas` here would reset it on every upgrade or apply.
        ...(values.gateway.autoscaling.enabled ? {} : { replicas: values.gateway.replicas }),
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: GATEWAY_NAME,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            ...placement(values.gateway),
            // Soft spreading, as the operator's: replicas on different nodes when possible, still schedulable on one.
            topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } }],
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } }],
              },
            },
            // The preStop sleep, then in-flight calls finish (the gateway drains on SIGTERM).
            terminationGracePeriodSeconds: GATEWAY_GRACE_SECONDS,
            containers: [gatewayContainer(values)],
            // The certificate Secret: the pod waits in ContainerCreating until the operator (or cert-manager) has
            // written it, and kubelet swaps the files in place when it changes.
            volumes: [
              TMP_VOLUME,
              ...(values.gateway.tls.issuer === 'none' ? [] : [{ name: 'tls', secret: { secretName: values.gateway.tls.secretName } }]),
            ],
          },
        },
      },
    },
  ];
  objects.push({
    // A node drain evicts at most maxUnavailable gateway pods at once, whatever the replica count (a rollout is
    // bounded by the Deployment's own maxUnavailable).
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: GATEWAY_NAME, namespace: ns, labels },
    spec: { maxUnavailable: values.gateway.podDisruptionBudget.maxUnavailable, selector: { matchLabels: selector } },
  });
  if (values.gateway.autoscaling.enabled) objects.push(gatewayAutoscaler(values));
  if (values.gateway.networkPolicy.enabled) objects.push(gatewayNetworkPolicy(values));
  return objects;
}

/** The gateway's HorizontalPodAutoscaler: CPU utilisation of the CPU requested (metrics-server's `metrics.k8s.io`). */
export function gatewayAutoscaler(values: DeployValues): object {
  const { minReplicas, maxReplicas, targetCPUUtilizationPercentage, scaleDownStabilizationSeconds } = values.gateway.autoscaling;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: GATEWAY_NAME, namespace: values.namespace, labels: gatewayLabels() },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: GATEWAY_NAME },
      minReplicas,
      maxReplicas,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: targetCPUUtilizationPercentage } } }],
      behavior: { scaleDown: { stabilizationWindowSeconds: scaleDownStabilizationSeconds } },
    },
  };
}

function gatewayNetworkPolicy(values: DeployValues): object {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: GATEWAY_NAME, namespace: values.namespace, labels: gatewayLabels() },
    spec: {
      podSelector: { matchLabels: gatewaySelectorLabels() },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [{ namespaceSelector: clientNamespaces(values.gateway.networkPolicy.clientNamespaceLabel) }], ports: [{ port: 'http', protocol: 'TCP' }] },
        // Probes and Prometheus scraping reach /healthz, /readyz and /metrics.
        { ports: [{ port: 'health', protocol: 'TCP' }] },
      ],
    },
  };
}

/** The namespaces whose pods may call the gateway: those labelled `label: "true"`, or every one when `label` is ''. */
function clientNamespaces(label: string): object {
  return label === '' ? {} : { matchLabels: { [label]: 'true' } };
}
