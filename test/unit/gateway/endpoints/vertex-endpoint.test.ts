import { describe, expect, it } from 'vitest';
import { compileEndpointFilter } from '../../../../src/gateway/endpoints/filter.js';
import { vertexEndpoint, type VertexEndpoint } from '../../../../src/gateway/endpoints/vertex-endpoint.js';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';

const pe: KubeObject = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'PredictionEndpoint',
  metadata: { name: 'fraud', namespace: 'demo', creationTimestamp: '2026-11-01T10:00:00Z' },
  spec: {
    displayName: 'Fraud',
    description: 'card payments',
    labels: { team: 'risk' },
    trafficSplit: { '1': 100 },
    encryptionSpec: { kmsKeyName: 'projects/p/locations/l/keyRings/r/cryptoKeys/k' },
    predictRequestResponseLoggingConfig: { enabled: true, samplingRate: 0.5 },
  },
  status: {
    name: 'projects/demo/locations/us-central1/endpoints/fraud',
    trafficSplit: { '1': 70, '2': 30 },
    etag: 'abc',
    updateTime: '2026-11-02T10:00:00Z',
    deployedModels: [
      {
        id: '1',
        model: 'projects/p/locations/l/models/gbt@7',
        deployedModelRef: 'champion',
        createTime: '2026-11-01T11:00:00Z',
      },
      { id: '2', model: 'projects/p/locations/l/models/gbt', deployedModelRef: 'gone' },
    ],
  },
};
const champion: KubeObject = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'DeployedModel',
  metadata: { name: 'champion', namespace: 'demo' },
  spec: {
    displayName: 'Champion',
    enableAccessLogging: true,
    dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1, maxReplicaCount: 3 },
  },
};

describe('the Endpoint resource as Vertex returns it', () => {
  it("uses Vertex's field names, the split in effect, and the deployed models' resources", () => {
    expect(vertexEndpoint(pe, (name) => (name === 'champion' ? champion : undefined))).toEqual({
      name: 'projects/demo/locations/us-central1/endpoints/fraud',
      displayName: 'Fraud',
      description: 'card payments',
      labels: { team: 'risk' },
      trafficSplit: { '1': 70, '2': 30 },
      etag: 'abc',
      createTime: '2026-11-01T10:00:00Z',
      updateTime: '2026-11-02T10:00:00Z',
      encryptionSpec: { kmsKeyName: 'projects/p/locations/l/keyRings/r/cryptoKeys/k' },
      predictRequestResponseLoggingConfig: { enabled: true, samplingRate: 0.5 },
      deployedModels: [
        {
          id: '1',
          model: 'projects/p/locations/l/models/gbt',
          modelVersionId: '7',
          displayName: 'Champion',
          createTime: '2026-11-01T11:00:00Z',
          enableAccessLogging: true,
          dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1, maxReplicaCount: 3 },
        },
        { id: '2', model: 'projects/p/locations/l/models/gbt' },
      ],
    });
  });
});

describe('the ListEndpoints filter', () => {
  const e = (name: string, displayName: string, labels?: Record<string, string>): VertexEndpoint => ({
    name: `projects/p/locations/l/endpoints/${name}`,
    displayName,
    ...(labels ? { labels } : {}),
  });
  const all = [e('a', 'Fraud', { team: 'risk' }), e('b', 'Churn', { team: 'crm', env: 'prod' }), e('c', 'Other')];
  const names = (filter: string) => all.filter(compileEndpointFilter(filter)).map((x) => x.name.slice(-1));

  it('reads the simple forms, joined by AND', () => {
    expect(names('')).toEqual(['a', 'b', 'c']);
    expect(names('display_name="Fraud"')).toEqual(['a']);
    expect(names('display_name!=Fraud')).toEqual(['b', 'c']);
    expect(names('endpoint="b"')).toEqual(['b']);
    expect(names('labels.team="crm" AND labels.env=prod')).toEqual(['b']);
    expect(names('labels.env:*')).toEqual(['b']);
    expect(names('labels:team')).toEqual(['a', 'b']);
  });

  it('refuses what it does not read, naming the term', () => {
    expect(() => compileEndpointFilter('create_time>"2020"')).toThrow(
      /the term "create_time>\\"2020\\"" is not supported/,
    );
    expect(() => compileEndpointFilter('display_name="a" OR endpoint="b"')).toThrow(/not supported/);
  });
});
