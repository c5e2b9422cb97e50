/**
 * EndpointService's field tables (../field-table.ts): where each field of a written object came from in the
 * request, so a refusal by the project's validators or the apiserver names the field the caller sent
 * (`spec.dedicatedResources.minReplicaCount` → `deployed_model.dedicated_resources.min_replica_count`).
 */
import type { FieldTable } from '../field-table.js';

export const CREATE_ENDPOINT_FIELDS: FieldTable = {
  'metadata.name': 'endpoint_id',
  metadata: 'endpoint',
  spec: 'endpoint',
};

/** UpdateEndpoint and DeleteEndpoint: the endpoint's fields, spec.etag from the endpoint the request carries. */
export const UPDATE_ENDPOINT_FIELDS: FieldTable = {
  'metadata.name': 'endpoint.name',
  metadata: 'endpoint',
  spec: 'endpoint',
};

/** DeployModel's and UndeployModel's DeployedModel. */
export const DEPLOY_MODEL_FIELDS: FieldTable = {
  'metadata.name': 'deployed_model.id',
  'spec.endpointRef': 'endpoint',
  'spec.endpointRef.name': 'endpoint',
  spec: 'deployed_model',
};

/** The endpoint's split, as DeployModel and UndeployModel write it. */
export const SPLIT_FIELDS: FieldTable = { 'spec.trafficSplit': 'traffic_split', spec: 'endpoint' };

/** MutateDeployedModel's DeployedModel. */
export const MUTATE_DEPLOYED_MODEL_FIELDS: FieldTable = { spec: 'deployed_model' };
