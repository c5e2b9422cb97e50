import { describe, expect, it } from 'vitest';
import {
  CREATE_ENDPOINT_FIELDS,
  DEPLOY_MODEL_FIELDS,
  SPLIT_FIELDS,
  camelCase,
  requestPath,
} from '../../../../../src/gateway/writes/endpoints/field-tables.js';

describe('object path → request path', () => {
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
    [DEPLOY_MODEL_FIELDS, 'spec.endpointRef.name', 'endpoint'],
    [DEPLOY_MODEL_FIELDS, 'metadata.name', 'deployed_model.id'],
    [SPLIT_FIELDS, 'spec.trafficSplit[12]', 'traffic_split[12]'],
    [CREATE_ENDPOINT_FIELDS, 'metadata.name', 'endpoint_id'],
    [CREATE_ENDPOINT_FIELDS, 'spec.displayName', 'endpoint.display_name'],
    [CREATE_ENDPOINT_FIELDS, 'spec.labels[example.com/team]', 'endpoint.labels[example.com/team]'],
    [
      CREATE_ENDPOINT_FIELDS,
      'spec.predictRequestResponseLoggingConfig.bigqueryDestination.outputUri',
      'endpoint.predict_request_response_logging_config.bigquery_destination.output_uri',
    ],
  ])('%#: %s', (table, from, to) => {
    expect(requestPath(table, from)).toBe(to);
  });

  it('matches whole segments only, and says when no row fits', () => {
    expect(requestPath(SPLIT_FIELDS, 'spec.trafficSplitX')).toBeUndefined();
    expect(requestPath(SPLIT_FIELDS, 'spec.displayName')).toBeUndefined();
  });

  it('reads FieldMask paths in either case', () => {
    expect(camelCase('dedicated_resources.min_replica_count')).toBe('dedicatedResources.minReplicaCount');
    expect(camelCase('displayName')).toBe('displayName');
  });
});
