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

/** UpdateEndpoint's update_mask paths (camelCase) and the spec field each one sets. */
export const UPDATE_ENDPOINT_MASK: Readonly<Record<string, string>> = {
  displayName: 'displayName',
  description: 'description',
  labels: 'labels',
  trafficSplit: 'trafficSplit',
};

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
