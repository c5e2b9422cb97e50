/**
 * EndpointService requests (proto3 JSON, as both transports deliver them) → the spec of the objects they write:
 * an Endpoint → a PredictionEndpoint's spec, a DeployedModel → a DeployedModel's spec naming its Model by
 * reference (issue 47's form: spec.model and the resources, no inline server). Fields are copied under the same
 * names (the kinds mirror Vertex's messages); output-only fields are ignored, as Google's front ends ignore them.
 * Pure.
 */
import { isRecord } from '../../../api/common/kube-object.js';
import type { FieldViolation } from '../../google-errors.js';
import { snakeCase } from '../field-table.js';

type Json = Record<string, unknown>;

/** The Endpoint fields a caller may set (google.cloud.aiplatform.v1.Endpoint, the ones a PredictionEndpoint has). */
const ENDPOINT_INPUT_FIELDS = [
  'displayName',
  'description',
  'labels',
  'encryptionSpec',
  'network',
  'enablePrivateServiceConnect',
  'predictRequestResponseLoggingConfig',
] as const;

function copy(from: Json, fields: readonly string[]): Json {
  const out: Json = {};
  for (const f of fields) if (from[f] !== undefined) out[f] = from[f];
  return out;
}

/** CreateEndpoint: the PredictionEndpoint's spec from `endpoint`. */
export function endpointSpecFromRequest(endpoint: Json): { spec: Json; violations: FieldViolation[] } {
  const violations: FieldViolation[] = [];
  if (isRecord(endpoint.trafficSplit) && Object.keys(endpoint.trafficSplit).length > 0)
    violations.push({
      field: 'endpoint.traffic_split',
      description:
        'a new endpoint has no deployed models to give traffic to: leave it empty and give traffic_split to DeployModel',
    });
  return { spec: copy(endpoint, ENDPOINT_INPUT_FIELDS), violations };
}

/** `min_replica_count` → `minReplicaCount` (a FieldMask path may come in either form). */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** UpdateEndpoint's update_mask paths (camelCase) and the spec field each one sets. */
export const UPDATE_ENDPOINT_MASK: Readonly<Record<string, string>> = {
  displayName: 'displayName',
  description: 'description',
  labels: 'labels',
  trafficSplit: 'trafficSplit',
};

/** A FieldMask's paths as the request gives them (a list, or proto3 JSON's comma-joined string), camelCased. */
export function maskPaths(mask: unknown): string[] {
  const paths =
    typeof mask === 'string' ? mask.split(',') : isRecord(mask) && Array.isArray(mask.paths) ? mask.paths : [];
  return paths
    .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
    .map((p) => p.trim().split('.').map(camelCase).join('.'));
}

/** Each masked spec field with its new value (undefined: cleared), or the mask paths that cannot be updated. */
export function maskedChanges(
  from: Json,
  paths: readonly string[],
  allowed: Readonly<Record<string, string>>,
): { changes: [string[], unknown][]; violations: FieldViolation[] } {
  const changes: [string[], unknown][] = [];
  const violations: FieldViolation[] = [];
  if (paths.length === 0)
    violations.push({
      field: 'update_mask',
      description: `required: name the fields to change (${Object.keys(allowed).join(', ')})`,
    });
  for (const path of paths) {
    const target = allowed[path];
    if (target === undefined) {
      violations.push({
        field: 'update_mask',
        description: `${JSON.stringify(path)} cannot be updated by this method; it can update: ${Object.keys(allowed).join(', ')}`,
      });
      continue;
    }
    const segments = path.split('.');
    let value: unknown = from;
    for (const s of segments) value = isRecord(value) ? value[s] : undefined;
    changes.push([target.split('.'), value]);
  }
  return { changes, violations };
}

/** MutateDeployedModel's update_mask paths (camelCase, Vertex's list of mutable fields) and the spec field each sets. */
export const MUTATE_DEPLOYED_MODEL_MASK: Readonly<Record<string, string>> = {
  'dedicatedResources.minReplicaCount': 'dedicatedResources.minReplicaCount',
  'dedicatedResources.maxReplicaCount': 'dedicatedResources.maxReplicaCount',
  'dedicatedResources.requiredReplicaCount': 'dedicatedResources.requiredReplicaCount',
  'dedicatedResources.autoscalingMetricSpecs': 'dedicatedResources.autoscalingMetricSpecs',
  'automaticResources.minReplicaCount': 'automaticResources.minReplicaCount',
  'automaticResources.maxReplicaCount': 'automaticResources.maxReplicaCount',
  disableContainerLogging: 'disableContainerLogging',
};

/** `target` with the value at `path` set (or removed when undefined), creating the objects on the way. */
export function setAt(target: Json, path: readonly string[], value: unknown): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    if (value === undefined) delete target[head];
    else target[head] = value;
    return;
  }
  const next = isRecord(target[head]) ? target[head] : {};
  target[head] = next;
  setAt(next, rest, value);
}

/** The DeployedModel fields DeployModel copies (google.cloud.aiplatform.v1.DeployedModel). */
const DEPLOYED_MODEL_INPUT_FIELDS = [
  'model',
  'displayName',
  'dedicatedResources',
  'automaticResources',
  'enableAccessLogging',
  'disableContainerLogging',
] as const;

/** Fields of Vertex's DeployedModel that name what this cluster does not run; refused rather than ignored. */
const UNSUPPORTED_DEPLOYED_MODEL_FIELDS: Readonly<Record<string, string>> = {
  sharedResources: 'deployment resource pools are not served here: give dedicated_resources or automatic_resources',
  explanationSpec: 'explanations are configured on the model server, not per deployment, here',
};

/** DeployModel: the DeployedModel's spec for deployed model `id` on endpoint object `endpointName`. */
export function deployedModelSpecFromRequest(
  deployed: Json,
  endpointName: string,
  id: string,
): { spec: Json; violations: FieldViolation[] } {
  const violations: FieldViolation[] = [];
  for (const [field, why] of Object.entries(UNSUPPORTED_DEPLOYED_MODEL_FIELDS))
    if (deployed[field] !== undefined)
      violations.push({
        field: `deployed_model.${snakeCase(field)}`,
        description: why,
      });
  const spec: Json = { endpointRef: { name: endpointName }, id, ...copy(deployed, DEPLOYED_MODEL_INPUT_FIELDS) };
  return { spec, violations };
}
