/**
 * The Model resource as Vertex AI returns it (google.cloud.aiplatform.v1.Model in proto3 JSON), one version of a
 * Model object at a time, as GetModel (`name@version`), ListModels (the default version) and ListModelVersions
 * answer. Pure. It carries what the Python SDK reads before it deploys (aiplatform/models.py): `versionId` and
 * `versionAliases` (its `versioned_resource_name`), `supportedDeploymentResourcesTypes` (a custom-container model
 * takes DEDICATED_RESOURCES: `deploy(machine_type=...)`), `containerSpec`, `artifactUri`, `deployedModels`,
 * the create and update times.
 */
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';
import { DEFAULT_ALIAS, type ModelSpec, type ModelVersion } from '../../../api/prediction/v1/model-schema.js';

export interface VertexModel {
  name: string;
  versionId: string;
  versionAliases?: string[];
  versionCreateTime?: string;
  versionUpdateTime?: string;
  displayName: string;
  description?: string;
  versionDescription?: string;
  containerSpec?: Record<string, unknown>;
  artifactUri?: string;
  supportedDeploymentResourcesTypes: string[];
  createTime?: string;
  updateTime?: string;
  deployedModels?: { endpoint: string; deployedModelId: string }[];
  labels?: Record<string, string>;
}

/** Where a DeployedModel of the namespace is: its endpoint's resource name and its deployed-model id, if known. */
export type DeployedModelLookup = (deployedModel: string) => { endpoint: string; id: string } | undefined;

/** A Model object's spec and status, read defensively (it is whatever the apiserver holds). */
export function modelSpecOf(obj: KubeObject): Partial<ModelSpec> {
  return isRecord(obj.spec) ? (obj.spec as Partial<ModelSpec>) : {};
}

/** The version `at` names (an id or an alias; undefined: the default alias), if the model has it. */
export function versionAt(spec: Partial<ModelSpec>, at: string | undefined): ModelVersion | undefined {
  const alias = at === undefined || !/^[0-9]+$/.test(at) ? (at ?? DEFAULT_ALIAS) : undefined;
  const id = alias === undefined ? at : spec.versionAliases?.find((a) => a.alias === alias)?.versionId;
  return spec.versions?.find((v) => v.id === id);
}

/** The Model's version ids, numerically ascending. */
export function versionIds(spec: Partial<ModelSpec>): string[] {
  return (spec.versions ?? []).map((v) => v.id).sort((a, b) => Number(a) - Number(b));
}

/** ModelContainerSpec's fields this project's container spec shares with it, in Vertex's names. */
function containerSpecOf(spec: unknown): Record<string, unknown> | undefined {
  if (!isRecord(spec)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of ['imageUri', 'command', 'args', 'predictRoute', 'healthRoute'] as const)
    if (spec[key] !== undefined) out[key] = spec[key];
  if (Array.isArray(spec.env))
    out.env = (spec.env as unknown[])
      .filter(isRecord)
      .map((e) => ({ name: e.name, ...(typeof e.value === 'string' ? { value: e.value } : {}) }));
  if (Array.isArray(spec.ports))
    out.ports = (spec.ports as unknown[]).filter(isRecord).map((p) => ({ containerPort: p.containerPort }));
  return out;
}

function versionCreateTimes(status: unknown): Map<string, string> {
  const list = isRecord(status) && Array.isArray(status.versions) ? (status.versions as unknown[]) : [];
  const out = new Map<string, string>();
  for (const v of list)
    if (isRecord(v) && typeof v.id === 'string' && typeof v.createTime === 'string') out.set(v.id, v.createTime);
  return out;
}

function lastWrite(obj: KubeObject): string | undefined {
  const times = (obj.metadata.managedFields ?? []).map((e) => e.time).filter((t): t is string => t !== undefined);
  return times.sort().at(-1);
}

/** One version of a Model object as Vertex's Model. `resourceName` is `projects/{p}/locations/{l}/models/{id}`. */
export function vertexModel(
  obj: KubeObject,
  version: ModelVersion,
  resourceName: string,
  lookup: DeployedModelLookup,
): VertexModel {
  const spec = modelSpecOf(obj);
  const created = obj.metadata.creationTimestamp;
  const updated = lastWrite(obj) ?? created;
  const versionCreated = versionCreateTimes(obj.status).get(version.id) ?? created;
  const aliases = (spec.versionAliases ?? []).filter((a) => a.versionId === version.id).map((a) => a.alias);
  const status = isRecord(obj.status) ? obj.status : {};
  const deployments = Array.isArray(status.deployedModels) ? (status.deployedModels as unknown[]) : [];
  const deployedModels = deployments
    .filter((d): d is Record<string, unknown> => isRecord(d) && d.versionId === version.id)
    .map((d) => lookup(String(d.deployedModel)))
    .filter((d) => d !== undefined)
    .map((d) => ({ endpoint: d.endpoint, deployedModelId: d.id }));
  const out: VertexModel = {
    name: resourceName,
    versionId: version.id,
    displayName: spec.displayName ?? '',
    supportedDeploymentResourcesTypes: ['DEDICATED_RESOURCES'],
  };
  if (aliases.length > 0) out.versionAliases = aliases;
  if (versionCreated !== undefined) out.versionCreateTime = versionCreated;
  if (updated !== undefined) out.versionUpdateTime = updated;
  if (spec.description !== undefined) out.description = spec.description;
  if (version.versionDescription !== undefined) out.versionDescription = version.versionDescription;
  const container = containerSpecOf(version.containerSpec);
  if (container !== undefined) out.containerSpec = container;
  if (version.artifactUri !== undefined) out.artifactUri = version.artifactUri;
  if (created !== undefined) out.createTime = created;
  if (updated !== undefined) out.updateTime = updated;
  if (deployedModels.length > 0) out.deployedModels = deployedModels;
  if (spec.labels !== undefined && Object.keys(spec.labels).length > 0) out.labels = { ...spec.labels };
  return out;
}
