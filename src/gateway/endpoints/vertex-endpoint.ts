/**
 * The Endpoint resource as Vertex AI returns it (google.cloud.aiplatform.v1.Endpoint in proto3 JSON), built from a
 * PredictionEndpoint and its DeployedModels. Pure. Google's clients read it before they call: the Python SDK's
 * `aiplatform.Endpoint(name)` gets it, and its `predict()` reports the deployed models it lists.
 *
 * `trafficSplit` is the split in effect (status.trafficSplit: the one calls are routed by), as Vertex reports the
 * split that serves. Fields at their default are left out, as Google's front ends do.
 *
 * `deployedModels[].privateEndpoints` is never set: Vertex fills it for a peered endpoint with plain-HTTP URIs that
 * its SDK (`aiplatform.PrivateEndpoint`) calls without credentials inside the VPC, and this gateway authenticates
 * every call (docs/clients.md).
 */
import { isRecord, type KubeObject } from '../../api/common/kube-object.js';

export interface VertexDeployedModel {
  id: string;
  model: string;
  modelVersionId?: string;
  displayName?: string;
  createTime?: string;
  dedicatedResources?: Record<string, unknown>;
  automaticResources?: Record<string, unknown>;
  enableAccessLogging?: boolean;
}

export interface VertexEndpoint {
  name: string;
  displayName: string;
  description?: string;
  deployedModels?: VertexDeployedModel[];
  trafficSplit?: Record<string, number>;
  etag?: string;
  labels?: Record<string, string>;
  createTime?: string;
  updateTime?: string;
  encryptionSpec?: { kmsKeyName: string };
  network?: string;
  enablePrivateServiceConnect?: boolean;
  modelDeploymentMonitoringJob?: string;
  predictRequestResponseLoggingConfig?: Record<string, unknown>;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isRecord(v)) return undefined;
  const out = Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return Object.keys(out).length > 0 ? out : undefined;
}

function numberMap(v: unknown): Record<string, number> | undefined {
  if (!isRecord(v)) return undefined;
  const out = Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'));
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Vertex's DedicatedResources from a DeployedModel's spec (machine spec, replica counts, autoscaling, spot). */
function dedicatedResources(spec: Record<string, unknown>): Record<string, unknown> | undefined {
  const d = spec.dedicatedResources;
  if (!isRecord(d)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of ['machineSpec', 'minReplicaCount', 'maxReplicaCount', 'requiredReplicaCount', 'spot'] as const)
    if (d[key] !== undefined) out[key] = d[key];
  if (Array.isArray(d.autoscalingMetricSpecs) && d.autoscalingMetricSpecs.length > 0)
    out.autoscalingMetricSpecs = d.autoscalingMetricSpecs;
  return out;
}

function automaticResources(spec: Record<string, unknown>): Record<string, unknown> | undefined {
  const a = spec.automaticResources;
  return isRecord(a) ? { ...a } : undefined;
}

function deployedModel(summary: Record<string, unknown>, dm: KubeObject | undefined): VertexDeployedModel | undefined {
  const id = str(summary.id);
  const model = str(summary.model);
  if (id === undefined || model === undefined) return undefined;
  const spec = dm !== undefined && isRecord(dm.spec) ? dm.spec : {};
  const at = model.indexOf('@');
  const out: VertexDeployedModel = { id, model: at < 0 ? model : model.slice(0, at) };
  // A DeployedModel that names a Model serves the version its status records, wherever its alias points now.
  const pinned = dm !== undefined && isRecord(dm.status) ? str(dm.status.modelVersionId) : undefined;
  if (pinned !== undefined) out.modelVersionId = pinned;
  else if (at >= 0) out.modelVersionId = model.slice(at + 1);
  const displayName = str(summary.displayName) ?? str(spec.displayName);
  if (displayName !== undefined) out.displayName = displayName;
  const createTime = str(summary.createTime) ?? str(dm?.metadata.creationTimestamp);
  if (createTime !== undefined) out.createTime = createTime;
  const dedicated = dedicatedResources(spec);
  const automatic = automaticResources(spec);
  if (dedicated !== undefined) out.dedicatedResources = dedicated;
  else if (automatic !== undefined) out.automaticResources = automatic;
  if (spec.enableAccessLogging === true) out.enableAccessLogging = true;
  return out;
}

/**
 * The Vertex Endpoint of `pe` (which has a status.name), its deployed models read through `modelNamed` (a
 * DeployedModel by metadata.name in the endpoint's namespace).
 */
export function vertexEndpoint(pe: KubeObject, modelNamed: (name: string) => KubeObject | undefined): VertexEndpoint {
  const spec = isRecord(pe.spec) ? pe.spec : {};
  const status = isRecord(pe.status) ? pe.status : {};
  const out: VertexEndpoint = { name: str(status.name) ?? '', displayName: str(spec.displayName) ?? '' };
  const description = str(spec.description);
  if (description !== undefined) out.description = description;
  const models = (Array.isArray(status.deployedModels) ? status.deployedModels : [])
    .filter(isRecord)
    .map((s) =>
      deployedModel(s, str(s.deployedModelRef) === undefined ? undefined : modelNamed(s.deployedModelRef as string)),
    )
    .filter((m): m is VertexDeployedModel => m !== undefined);
  if (models.length > 0) out.deployedModels = models;
  const split = numberMap(status.trafficSplit);
  if (split !== undefined) out.trafficSplit = split;
  const etag = str(status.etag);
  if (etag !== undefined) out.etag = etag;
  const labels = stringMap(spec.labels);
  if (labels !== undefined) out.labels = labels;
  const createTime = str(status.createTime) ?? str(pe.metadata.creationTimestamp);
  if (createTime !== undefined) out.createTime = createTime;
  const updateTime = str(status.updateTime) ?? createTime;
  if (updateTime !== undefined) out.updateTime = updateTime;
  const kmsKeyName = isRecord(spec.encryptionSpec) ? str(spec.encryptionSpec.kmsKeyName) : undefined;
  if (kmsKeyName !== undefined) out.encryptionSpec = { kmsKeyName };
  const network = str(spec.network);
  if (network !== undefined) out.network = network;
  if (spec.enablePrivateServiceConnect === true) out.enablePrivateServiceConnect = true;
  const job = str(status.modelDeploymentMonitoringJob);
  if (job !== undefined) out.modelDeploymentMonitoringJob = job;
  if (isRecord(spec.predictRequestResponseLoggingConfig))
    out.predictRequestResponseLoggingConfig = { ...spec.predictRequestResponseLoggingConfig };
  return out;
}
