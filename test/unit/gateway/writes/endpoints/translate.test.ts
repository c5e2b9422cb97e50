import { describe, expect, it } from 'vitest';
import {
  MUTATE_DEPLOYED_MODEL_MASK,
  UPDATE_ENDPOINT_MASK,
  deployedModelSpecFromRequest,
  endpointSpecFromRequest,
  maskPaths,
  maskedChanges,
  setAt,
} from '../../../../../src/gateway/writes/endpoints/translate.js';

describe('CreateEndpoint', () => {
  it("copies the caller's fields and ignores output-only ones", () => {
    const { spec, violations } = endpointSpecFromRequest({
      displayName: 'iris',
      labels: { team: 'ml' },
      name: 'projects/p/locations/l/endpoints/x',
      createTime: '2026-01-01T00:00:00Z',
      deployedModels: [{ id: '1' }],
      etag: 'abc',
    });
    expect(spec).toEqual({ displayName: 'iris', labels: { team: 'ml' } });
    expect(violations).toEqual([]);
  });

  it('refuses a traffic split on a new endpoint', () => {
    const { violations } = endpointSpecFromRequest({ displayName: 'iris', trafficSplit: { '1': 100 } });
    expect(violations.map((v) => v.field)).toEqual(['endpoint.traffic_split']);
  });
});

describe('DeployModel', () => {
  it('names the Model by reference, with the endpoint and the chosen id', () => {
    const { spec, violations } = deployedModelSpecFromRequest(
      {
        model: 'projects/demo/locations/us-central1/models/iris@2',
        displayName: 'iris v2',
        dedicatedResources: { machineSpec: { machineType: 'e2-small' }, minReplicaCount: 1, maxReplicaCount: 2 },
        id: '99',
        createTime: 'ignored',
      },
      'iris-endpoint',
      '7',
    );
    expect(violations).toEqual([]);
    expect(spec).toEqual({
      endpointRef: { name: 'iris-endpoint' },
      id: '7',
      model: 'projects/demo/locations/us-central1/models/iris@2',
      displayName: 'iris v2',
      dedicatedResources: { machineSpec: { machineType: 'e2-small' }, minReplicaCount: 1, maxReplicaCount: 2 },
    });
  });

  it('refuses shared resources, which this cluster does not have', () => {
    const { violations } = deployedModelSpecFromRequest({ model: 'm', sharedResources: 'x' }, 'e', '1');
    expect(violations.map((v) => v.field)).toEqual(['deployed_model.shared_resources']);
  });
});

describe('update masks', () => {
  it('reads a mask as a list or as the comma-joined JSON string, in either case', () => {
    expect(maskPaths({ paths: ['display_name', 'labels'] })).toEqual(['displayName', 'labels']);
    expect(maskPaths('displayName,trafficSplit')).toEqual(['displayName', 'trafficSplit']);
    expect(maskPaths(undefined)).toEqual([]);
  });

  it('gives each masked field its new value, absent meaning cleared', () => {
    expect(maskedChanges({ displayName: 'n' }, ['displayName', 'description'], UPDATE_ENDPOINT_MASK)).toEqual({
      changes: [
        [['displayName'], 'n'],
        [['description'], undefined],
      ],
      violations: [],
    });
  });

  it('refuses a field the method cannot change, and an empty mask', () => {
    const refused = maskedChanges({}, ['network'], UPDATE_ENDPOINT_MASK).violations;
    expect(refused).toHaveLength(1);
    expect(refused[0]?.description).toContain('"network" cannot be updated by this method');
    expect(maskedChanges({}, [], MUTATE_DEPLOYED_MODEL_MASK).violations[0]?.field).toBe('update_mask');
  });

  it('takes nested mutable fields of a deployed model', () => {
    const { changes } = maskedChanges(
      { dedicatedResources: { minReplicaCount: 2 } },
      ['dedicatedResources.minReplicaCount'],
      MUTATE_DEPLOYED_MODEL_MASK,
    );
    const spec: Record<string, unknown> = {
      dedicatedResources: { minReplicaCount: 1, machineSpec: { machineType: 'x' } },
    };
    for (const [path, value] of changes) setAt(spec, path, value);
    expect(spec).toEqual({ dedicatedResources: { minReplicaCount: 2, machineSpec: { machineType: 'x' } } });
  });
});
