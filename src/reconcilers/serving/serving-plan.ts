/**
 * What a DeployedModel with `spec.containerSpec` becomes, as pure functions of the model and the
 * machine catalogue: a Deployment, a Service, an autoscaling/v2 HorizontalPodAutoscaler (only when
 * maxReplicaCount > minReplicaCount) and a policy/v1 PodDisruptionBudget (only when minReplicaCount ≥ 2).
 * Each is a server-side-apply body owned by the model (ownerReferences: garbage collection removes them).
 * The model's NetworkPolicy is in network-policy-plan.ts.
 */
import {
  AutoscalingMetric as Metric,
  DEFAULT_CONTAINER_PORT,
  DEFAULT_DEPLOYMENT_TIMEOUT_SECONDS,
  durationSeconds,
  type ContainerSpec,
  type Probe,
} from '../../api/prediction/v1/container-spec.js';
import type { DeployedModelSpec } from '../../api/prediction/v1/deployed-model-schema.js';
import { PREDICTION_GROUP } from '../../api/prediction/v1/names.js';
import { CustomMetric, SERVING_PORT_NAME, servingName, servingRoutes } from '../../api/prediction/v1/serving-names.js';
import type { KubeObject } from '../../api/common/kube-object.js';
import type { MachineCatalogue, Toleration } from '../../api/prediction/v1/machine-catalogue.js';
import type { ArtifactMount } from './artifact-volume.js';

/** Selects a model's pods; the uid, because a model name may be longer than a label value. */
export const MODEL_UID_LABEL = `${PREDICTION_GROUP}/deployed-model-uid`;
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'endpoint-operator' } as const;
export const CONTAINER_NAME = 'model-server';
export const PORT_NAME = SERVING_PORT_NAME;
export { servingName };

/**
 * How long a stopping model pod keeps serving before its server gets SIGTERM (a preStop sleep): the
 * EndpointSlice drops a terminating pod at once, but every gateway replica learns it through its watch a
 * moment later; until then calls still arrive, and a server that stopped at once would refuse or reset them.
 */
export const DRAIN_SECONDS = 5;

/** Vertex's default autoscaling target. */
export const DEFAULT_TARGET = 60;
export interface ServingInput {
  readonly model: KubeObject;
  readonly spec: DeployedModelSpec & { containerSpec: ContainerSpec };
  /** The deployed-model id (spec.id or the one assigned). */
  readonly id: string;
}

export interface Replicas {
  readonly min: number;
  readonly max: number;
  readonly required: number;
}

export type Resolved =
  | {
      readonly ok: true;
      readonly resources: Record<string, string>;
      readonly nodeSelector: Record<string, string>;
      readonly tolerations: Toleration[];
    }
  | { readonly ok: false; readonly message: string };

export function replicasOf(spec: DeployedModelSpec): Replicas {
  const d = spec.dedicatedResources;
  const a = spec.automaticResources;
  const min = d?.minReplicaCount ?? a?.minReplicaCount ?? 1;
  const max = Math.max(min, d?.maxReplicaCount ?? a?.maxReplicaCount ?? min);
  return { min, max, required: Math.min(min, d?.requiredReplicaCount ?? min) };
}

/** Machine type, accelerators and spot through the catalogue; an entry it lacks is an error message, not a guess. */
export function resolveMachine(spec: DeployedModelSpec, catalogue: MachineCatalogue): Resolved {
  const machineSpec = spec.dedicatedResources?.machineSpec;
  const machineType = machineSpec?.machineType ?? catalogue.defaultMachineType;
  const machine = catalogue.machineTypes[machineType];
  const field =
    machineSpec === undefined
      ? "the catalogue's defaultMachineType (for automaticResources)"
      : 'spec.dedicatedResources.machineSpec.machineType';
  if (machine === undefined) {
    return {
      ok: false,
      message: `${field}: machine type "${machineType}" is not in the machine catalogue (known: ${Object.keys(catalogue.machineTypes).sort().join(', ')}); add it to the ConfigMap endpoint-operator-machine-types, or deploy a new DeployedModel with a listed type`,
    };
  }
  const resources: Record<string, string> = { cpu: machine.cpu, memory: machine.memory };
  const nodeSelector: Record<string, string> = { ...machine.nodeSelector };
  const tolerations: Toleration[] = [...(machine.tolerations ?? [])];
  const count = machineSpec?.acceleratorCount ?? 0;
  if (machineSpec?.acceleratorType !== undefined && count > 0) {
    const acc = catalogue.accelerators[machineSpec.acceleratorType];
    if (acc === undefined) {
      return {
        ok: false,
        message: `spec.dedicatedResources.machineSpec.acceleratorType: "${machineSpec.acceleratorType}" is not in the machine catalogue (known: ${Object.keys(catalogue.accelerators).sort().join(', ') || 'none'}); add it to the ConfigMap endpoint-operator-machine-types`,
      };
    }
    resources[acc.resource] = String(count);
    Object.assign(nodeSelector, acc.nodeSelector);
    tolerations.push(...(acc.tolerations ?? []));
  }
  if (spec.dedicatedResources?.spot === true) {
    Object.assign(nodeSelector, catalogue.spot.nodeSelector);
    tolerations.push(...(catalogue.spot.tolerations ?? []));
  }
  return { ok: true, resources, nodeSelector, tolerations };
}

function ownerReference(model: KubeObject): Record<string, unknown> {
  return {
    apiVersion: model.apiVersion ?? `${PREDICTION_GROUP}/v1`,
    kind: 'DeployedModel',
    name: model.metadata.name ?? '',
    uid: model.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Name, namespace, labels and owner of every object of the model (serving-plan.ts, network-policy-plan.ts). */
export function metadata(input: ServingInput): Record<string, unknown> {
  const name = servingName(input.model.metadata.name ?? '');
  return {
    name,
    namespace: input.model.metadata.namespace,
    labels: { ...MANAGED_BY, [MODEL_UID_LABEL]: input.model.metadata.uid ?? '' },
    ownerReferences: [ownerReference(input.model)],
  };
}

/** The label selector of the model's pods. */
export function selector(model: KubeObject): Record<string, string> {
  return { [MODEL_UID_LABEL]: model.metadata.uid ?? '' };
}

export function containerPort(container: ContainerSpec): number {
  return container.ports?.[0]?.containerPort ?? DEFAULT_CONTAINER_PORT;
}

export function deploymentTimeoutSeconds(container: ContainerSpec): number {
  return Math.ceil(
    container.deploymentTimeout === undefined
      ? DEFAULT_DEPLOYMENT_TIMEOUT_SECONDS
      : durationSeconds(container.deploymentTimeout),
  );
}

/** Vertex's default routes, as its custom-container contract gives them. */
export function routes(input: Pick<ServingInput, 'spec' | 'id'>): { predict: string; health: string } {
  return servingRoutes(input.spec.endpointRef.name, input.id, input.spec.containerSpec);
}

/**
 * The variables Vertex gives a custom container, so one built for Vertex runs unchanged; they win over
 * spec.containerSpec.env. `artifact` is spec.artifactUri resolved (artifact-volume.ts resolveArtifact).
 */
export function aipEnv(input: ServingInput, artifact: ArtifactMount | undefined): { name: string; value: string }[] {
  const { predict, health } = routes(input);
  const vars: Record<string, string> = {
    AIP_HTTP_PORT: String(containerPort(input.spec.containerSpec)),
    AIP_HEALTH_ROUTE: health,
    AIP_PREDICT_ROUTE: predict,
    AIP_DEPLOYED_MODEL_ID: input.id,
    AIP_ENDPOINT_ID: input.spec.endpointRef.name,
    AIP_MODE: 'PREDICTION',
  };
  if (input.spec.artifactUri !== undefined) vars.AIP_STORAGE_URI = artifact?.storageUri ?? input.spec.artifactUri;
  return Object.entries(vars).map(([name, value]) => ({ name, value }));
}

/** A Vertex Probe as a Kubernetes probe: the same fields; a handler without a port probes the container's port. */
export function kubeProbe(probe: Probe, port: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (probe.exec !== undefined) out.exec = { command: probe.exec.command ?? [] };
  if (probe.httpGet !== undefined)
    out.httpGet = { ...probe.httpGet, path: probe.httpGet.path ?? '/', port: probe.httpGet.port ?? port };
  if (probe.grpc !== undefined) out.grpc = { ...probe.grpc, port: probe.grpc.port ?? port };
  if (probe.tcpSocket !== undefined) out.tcpSocket = { ...probe.tcpSocket, port: probe.tcpSocket.port ?? port };
  for (const k of [
    'periodSeconds',
    'timeoutSeconds',
    'failureThreshold',
    'successThreshold',
    'initialDelaySeconds',
  ] as const) {
    if (probe[k] !== undefined) out[k] = probe[k];
  }
  return out;
}

const PROBE_PERIOD_SECONDS = 10;

function probes(input: ServingInput): Record<string, unknown> {
  const c = input.spec.containerSpec;
  const port = containerPort(c);
  const { health } = routes(input);
  // The startup probe holds readiness and liveness back for the whole deploymentTimeout, so a large model
  // loading for 40 minutes is not killed by a liveness check meant for a running server (kserve#3795).
  const window = Math.max(1, Math.ceil(deploymentTimeoutSeconds(c) / PROBE_PERIOD_SECONDS));
  return {
    startupProbe:
      c.startupProbe !== undefined
        ? kubeProbe(c.startupProbe, port)
        : { tcpSocket: { port }, periodSeconds: PROBE_PERIOD_SECONDS, failureThreshold: window },
    readinessProbe:
      c.healthProbe !== undefined
        ? kubeProbe(c.healthProbe, port)
        : { httpGet: { path: health, port }, periodSeconds: PROBE_PERIOD_SECONDS },
    livenessProbe:
      c.livenessProbe !== undefined
        ? kubeProbe(c.livenessProbe, port)
        : { tcpSocket: { port }, periodSeconds: PROBE_PERIOD_SECONDS },
  };
}

/**
 * The Deployment. `replicas` is left out when an HPA owns the count (`withReplicas: false`): with
 * server-side apply, the field then belongs to the autoscaler alone.
 */
export function deploymentManifest(
  input: ServingInput,
  machine: Extract<Resolved, { ok: true }>,
  withReplicas: boolean,
  artifact: ArtifactMount | undefined,
): KubeObject {
  const c = input.spec.containerSpec;
  const aip = aipEnv(input, artifact);
  const own = new Set(aip.map((e) => e.name));
  const env = [...(c.env ?? []).filter((e) => !own.has(e.name)), ...aip];
  const shm = c.sharedMemorySizeMb;
  const mounts = [
    ...(shm !== undefined ? [{ name: 'dshm', mountPath: '/dev/shm' }] : []),
    ...(artifact !== undefined ? [artifact.mount] : []),
  ];
  const volumes = [
    ...(shm !== undefined ? [{ name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: `${shm}Mi` } }] : []),
    ...(artifact !== undefined ? [artifact.volume] : []),
  ];
  const limits: Record<string, string> = { memory: machine.resources.memory ?? '' };
  for (const [k, v] of Object.entries(machine.resources)) if (k !== 'cpu' && k !== 'memory') limits[k] = v;
  const container: Record<string, unknown> = {
    name: CONTAINER_NAME,
    image: c.imageUri,
    ...(c.command !== undefined ? { command: c.command } : {}),
    ...(c.args !== undefined ? { args: c.args } : {}),
    env,
    ports: [{ name: PORT_NAME, containerPort: containerPort(c), protocol: 'TCP' }],
    resources: { requests: machine.resources, limits },
    ...probes(input),
    lifecycle: { preStop: { sleep: { seconds: DRAIN_SECONDS } } },
    // A crashing server's last log lines become its termination message, which the model's condition quotes.
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
  };
  const labels = { ...MANAGED_BY, ...selector(input.model) };
  const { min } = replicasOf(input.spec);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(input),
    spec: {
      ...(withReplicas ? { replicas: min } : {}),
      selector: { matchLabels: selector(input.model) },
      // ProgressDeadlineExceeded then says the deploymentTimeout passed (the DeploymentTimeout reason).
      progressDeadlineSeconds: deploymentTimeoutSeconds(c),
      template: {
        metadata: { labels },
        spec: {
          // Service links would add a variable per Service of the namespace to a container built for Vertex.
          enableServiceLinks: false,
          containers: [container],
          ...(volumes.length > 0 ? { volumes } : {}),
          ...(Object.keys(machine.nodeSelector).length > 0 ? { nodeSelector: machine.nodeSelector } : {}),
          ...(machine.tolerations.length > 0 ? { tolerations: machine.tolerations } : {}),
        },
      },
    },
  };
}

export function serviceManifest(input: ServingInput): KubeObject {
  const port = containerPort(input.spec.containerSpec);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(input),
    spec: {
      type: 'ClusterIP',
      selector: selector(input.model),
      ports: [{ name: PORT_NAME, port, targetPort: PORT_NAME, protocol: 'TCP' }],
    },
  };
}

/** One Vertex autoscaling metric as an autoscaling/v2 MetricSpec, in Vertex's units. */
function hpaMetric(metricName: string, target: number, modelName: string): Record<string, unknown> {
  const averageValue = { type: 'AverageValue', averageValue: String(target) };
  if (metricName === Metric.acceleratorDutyCycle)
    return { type: 'Pods', pods: { metric: { name: CustomMetric.acceleratorDutyCycle }, target: averageValue } };
  if (metricName === Metric.requestCount) {
    // Vertex's unit is requests per minute per replica. The gateway counts a model's calls, not its pods', so the
    // metric describes the DeployedModel and AverageValue has the HPA divide it by the replica count.
    const describedObject = { apiVersion: `${PREDICTION_GROUP}/v1`, kind: 'DeployedModel', name: modelName };
    return {
      type: 'Object',
      object: { describedObject, metric: { name: CustomMetric.requestsPerMinute }, target: averageValue },
    };
  }
  if (metricName === Metric.cpu)
    return { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } };
  // The webhook and the CRD refuse any other name for a containerSpec model (serving-validation.ts).
  throw new Error(`spec.dedicatedResources.autoscalingMetricSpecs: unsupported metricName "${metricName}"`);
}

/**
 * The HPA, or undefined when max = min (nothing to scale). Without autoscalingMetricSpecs, Vertex scales on
 * CPU at 60, and on the accelerator duty cycle at 60 too when the machine has accelerators; the specs given
 * replace those defaults.
 */
export function hpaManifest(input: ServingInput): KubeObject | undefined {
  const { min, max } = replicasOf(input.spec);
  if (max <= min) return undefined;
  const machineSpec = input.spec.dedicatedResources?.machineSpec;
  const defaults = [Metric.cpu, ...((machineSpec?.acceleratorCount ?? 0) > 0 ? [Metric.acceleratorDutyCycle] : [])].map(
    (metricName) => ({ metricName, target: DEFAULT_TARGET }),
  );
  const specs = input.spec.dedicatedResources?.autoscalingMetricSpecs ?? [];
  const modelName = input.model.metadata.name ?? '';
  const metrics = (specs.length > 0 ? specs : defaults).map((m) =>
    hpaMetric(m.metricName, m.target ?? DEFAULT_TARGET, modelName),
  );
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: metadata(input),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: servingName(modelName) },
      minReplicas: min,
      maxReplicas: max,
      metrics,
    },
  };
}

/** maxUnavailable 1, not minAvailable = min: the latter blocks every node drain (kserve#4574). */
export function pdbManifest(input: ServingInput): KubeObject | undefined {
  if (replicasOf(input.spec).min < 2) return undefined;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: metadata(input),
    spec: { maxUnavailable: 1, selector: { matchLabels: selector(input.model) } },
  };
}
