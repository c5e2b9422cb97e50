import { describe, expect, it } from 'vitest';
import { specOf, statusOf } from '../../../src/api/typed-spec.js';
import { deployedModel, registryService } from '../reconcilers/fixtures.js';

describe('specs decoded at the cache boundary', () => {
  it('gives typed fields, leaves out a field that breaks its schema and keeps the others', () => {
    const ok = deployedModel('dm', 'ep', { id: '1234567890' }).build();
    expect(specOf.deployedModel(ok).endpointRef?.name).toBe('ep');
    expect(specOf.deployedModel(ok).id).toBe('1234567890');
    const bad = deployedModel('dm', 'ep', { model: 42, id: 'not-digits' }).build();
    const view = specOf.deployedModel(bad);
    expect(view.endpointRef?.name).toBe('ep'); // still found by its reference
    expect(view.model).toBeUndefined();
    expect(view.id).toBeUndefined();
    expect(
      specOf.registryService(
        registryService(
          'svc',
          'projects/demo-project/locations/europe-west4/namespaces/shop/services/payments',
        ).build(),
      ).name,
    ).toBe('projects/demo-project/locations/europe-west4/namespaces/shop/services/payments');
  });

  it('treats nested "" and null as unset, as the validators do, instead of dropping the enclosing field', () => {
    const obj = deployedModel('dm', 'ep', {
      id: '',
      dedicatedResources: {
        machineSpec: { machineType: 'n1-standard-4', acceleratorType: '' },
        minReplicaCount: 1,
        maxReplicaCount: null,
      },
    }).build();
    const view = specOf.deployedModel(obj);
    expect(view.dedicatedResources).toEqual({ machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1 });
    expect(view.id).toBeUndefined();
  });

  it('decodes once per cached instance', () => {
    const obj = deployedModel('dm', 'ep').build();
    expect(specOf.deployedModel(obj)).toBe(specOf.deployedModel(obj));
    expect(specOf.deployedModel(structuredClone(obj))).not.toBe(specOf.deployedModel(obj));
    expect(specOf.deployedModel({ metadata: { name: 'x' } })).toEqual({});
  });

  it('decodes a previous status field by field: a field that breaks its schema is absent, the others are carried over', () => {
    const obj = {
      ...deployedModel('dm', 'ep').build(),
      status: { id: '42', deployTime: 7, endpoint: 'projects/p/locations/l/endpoints/ep', conditions: 'garbage' },
    };
    expect(statusOf.deployedModel(obj)).toEqual({ id: '42', endpoint: 'projects/p/locations/l/endpoints/ep' });
    expect(statusOf.predictionEndpoint({ metadata: { name: 'x' } })).toEqual({});
  });
});
