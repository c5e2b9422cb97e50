import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../../src/api/common/kube-object.js';
import { ownedConfiguration } from '../../../../../src/gateway/writes/endpoints/owned-fields.js';

// managedFields as the apiserver writes them after alice created the endpoint and argocd applied its labels.
const endpoint: KubeObject = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'PredictionEndpoint',
  metadata: {
    name: 'iris',
    namespace: 'demo',
    labels: { app: 'iris' },
    annotations: { 'endpoint-operator.dev/written-by': 'alice' },
    managedFields: [
      {
        manager: 'vertex-api/alice',
        operation: 'Apply',
        fieldsV1: {
          'f:metadata': { 'f:annotations': { 'f:endpoint-operator.dev/written-by': {} } },
          'f:spec': { 'f:displayName': {}, 'f:trafficSplit': {}, 'f:labels': { '.': {}, 'f:team': {} } },
        },
      },
      { manager: 'argocd-controller', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:labels': { 'f:env': {} } } } },
      { manager: 'vertex-api/alice', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
    ],
  },
  spec: { displayName: 'Iris', trafficSplit: { '1': 100 }, labels: { team: 'ml', env: 'prod' }, description: 'x' },
  status: { etag: 'e' },
};

describe('ownedConfiguration', () => {
  it("takes exactly the fields the manager applied, with today's values", () => {
    expect(ownedConfiguration(endpoint, 'vertex-api/alice')).toEqual({
      metadata: { annotations: { 'endpoint-operator.dev/written-by': 'alice' } },
      spec: { displayName: 'Iris', trafficSplit: { '1': 100 }, labels: { team: 'ml' } },
    });
    expect(ownedConfiguration(endpoint, 'argocd-controller')).toEqual({ spec: { labels: { env: 'prod' } } });
  });

  it('is undefined for a manager that applied nothing', () => {
    expect(ownedConfiguration(endpoint, 'vertex-api/bob')).toBeUndefined();
  });

  it('finds the items of a list keyed by a field, keys included', () => {
    const dm: KubeObject = {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: {
        name: 'iris-1',
        managedFields: [
          {
            manager: 'm',
            operation: 'Apply',
            fieldsV1: {
              'f:spec': {
                'f:dedicatedResources': {
                  'f:minReplicaCount': {},
                  'f:autoscalingMetricSpecs': { 'k:{"metricName":"cpu"}': { '.': {}, 'f:target': {} } },
                },
              },
            },
          },
        ],
      },
      spec: {
        dedicatedResources: {
          minReplicaCount: 1,
          maxReplicaCount: 3,
          autoscalingMetricSpecs: [
            { metricName: 'gpu', target: 50 },
            { metricName: 'cpu', target: 70 },
          ],
        },
      },
    };
    expect(ownedConfiguration(dm, 'm')?.spec).toEqual({
      dedicatedResources: { minReplicaCount: 1, autoscalingMetricSpecs: [{ metricName: 'cpu', target: 70 }] },
    });
  });
});
