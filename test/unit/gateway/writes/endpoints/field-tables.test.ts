import { describe, expect, it } from 'vitest';
import { requestField } from '../../../../../src/gateway/writes/field-table.js';
import {
  CREATE_ENDPOINT_FIELDS,
  DEPLOY_MODEL_FIELDS,
  MUTATE_DEPLOYED_MODEL_FIELDS,
  SPLIT_FIELDS,
  UPDATE_ENDPOINT_FIELDS,
} from '../../../../../src/gateway/writes/endpoints/field-tables.js';
import { camelCase } from '../../../../../src/gateway/writes/endpoints/translate.js';

describe("EndpointService's field tables: object path → request path", () => {
  it.each([
    [
      DEPLOY_MODEL_FIELDS,
      'spec.dedicatedResources.minReplicaCount',
      'deployed_model.dedicated_resources.min_replica_count',
    ],
    [
      DEPLOY_MODEL_FIELDS,
      'spec.dedicatedResources.machineSpec.machineType',
      'deployed_model.dedicated_resources.machine_spec.machine_type',
    ],
    [
      DEPLOY_MODEL_FIELDS,
      'spec.dedicatedResources.autoscalingMetricSpecs[0].target',
      'deployed_model.dedicated_resources.autoscaling_metric_specs[0].target',
    ],
    [DEPLOY_MODEL_FIELDS, 'spec', 'deployed_model'],
    [DEPLOY_MODEL_FIELDS, 'spec.model', 'deployed_model.model'],
    [DEPLOY_MODEL_FIELDS, 'spec.endpointRef.name', 'endpoint'],
    [DEPLOY_MODEL_FIELDS, 'metadata.name', 'deployed_model.id'],
    [SPLIT_FIELDS, 'spec.trafficSplit[12]', 'traffic_split[12]'],
    [SPLIT_FIELDS, 'spec.trafficSplit', 'traffic_split'],
    [CREATE_ENDPOINT_FIELDS, 'metadata.name', 'endpoint_id'],
    [CREATE_ENDPOINT_FIELDS, 'spec.displayName', 'endpoint.display_name'],
    [
      CREATE_ENDPOINT_FIELDS,
      'spec.predictRequestResponseLoggingConfig.bigqueryDestination.outputUri',
      'endpoint.predict_request_response_logging_config.bigquery_destination.output_uri',
    ],
    [UPDATE_ENDPOINT_FIELDS, 'spec.etag', 'endpoint.etag'],
    [UPDATE_ENDPOINT_FIELDS, 'spec.trafficSplit[3]', 'endpoint.traffic_split[3]'],
    [
      MUTATE_DEPLOYED_MODEL_FIELDS,
      'spec.dedicatedResources.maxReplicaCount',
      'deployed_model.dedicated_resources.max_replica_count',
    ],
  ])('%#: %s → %s', (table, from, to) => {
    expect(requestField(table, from)).toBe(to);
  });

  it('reads FieldMask paths in either case', () => {
    expect(camelCase('dedicated_resources.min_replica_count')).toBe('dedicatedResources.minReplicaCount');
    expect(camelCase('displayName')).toBe('displayName');
  });
});
