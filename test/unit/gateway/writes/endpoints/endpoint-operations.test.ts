import { describe, expect, it } from 'vitest';
import type { KubeObject, ResourceRef } from '../../../../../src/api/common/kube-object.js';
import {
  ENDPOINT_OPERATION_VERBS,
  SPLIT_EXTRA,
  WATCHED_GENERATION_EXTRA,
} from '../../../../../src/gateway/writes/endpoints/endpoint-operations.js';
import type { OperationRef } from '../../../../../src/gateway/writes/operations/operation-name.js';

const RESOURCE = 'projects/team-a/locations/europe-west4/endpoints/iris';

function verb(name: string) {
  const found = ENDPOINT_OPERATION_VERBS.find((v) => v.verb === name);
  if (found === undefined) throw new Error(name);
  return found;
}

function endpoint(effective: Record<string, number>): KubeObject {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'iris', namespace: 'team-a', uid: 'pe-uid', generation: 3 },
    spec: { displayName: 'iris', trafficSplit: { '7': 100 } },
    status: {
      name: RESOURCE,
      trafficSplit: effective,
      deployedModels: [
        { id: '7', model: 'projects/team-a/locations/europe-west4/models/iris@1', deployedModelRef: 'iris-7' },
      ],
    },
  };
}

function deployed(
  observed: number,
  ready: 'True' | 'False',
  stalled?: { reason: string; message: string },
): KubeObject {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name: 'iris-7', namespace: 'team-a', uid: 'dm-uid', generation: 1 },
    spec: { endpointRef: { name: 'iris' }, id: '7', model: 'projects/team-a/locations/europe-west4/models/iris@1' },
    status: {
      observedGeneration: observed,
      modelVersionId: '1',
      conditions: [
        { type: 'Ready', status: ready, reason: stalled?.reason ?? 'Deployed', message: stalled?.message ?? '' },
        ...(stalled ? [{ type: 'Stalled', status: 'True', reason: stalled.reason, message: stalled.message }] : []),
      ],
    },
  };
}

function derive(
  name: string,
  ref: Omit<OperationRef, 'resource' | 'verb'>,
  objects: Record<string, KubeObject | undefined>,
) {
  return verb(name).derive({
    ref: { resource: RESOURCE, verb: name, ...ref },
    namespace: 'team-a',
    read: async (resource: ResourceRef, objectName: string) => objects[`${resource.plural}/${objectName}`],
  });
}

const deployRef = { object: 'iris-7', generation: 1, extra: { [SPLIT_EXTRA]: JSON.stringify({ '7': 100 }) } };

describe('the deployModel operation', () => {
  it('is not done before the DeployedModel is Ready at its generation', async () => {
    const d = await derive('deployModel', deployRef, {
      'deployedmodels/iris-7': deployed(0, 'False'),
      'predictionendpoints/iris': endpoint({ '7': 100 }),
    });
    expect(d.done).toBe(false);
  });

  it('is not done while the endpoint still serves the previous split', async () => {
    const d = await derive('deployModel', deployRef, {
      'deployedmodels/iris-7': deployed(1, 'True'),
      'predictionendpoints/iris': endpoint({ '3': 100 }),
    });
    expect(d.done).toBe(false);
  });

  it('is done with the deployed model once both hold', async () => {
    const d = await derive('deployModel', deployRef, {
      'deployedmodels/iris-7': deployed(1, 'True'),
      'predictionendpoints/iris': endpoint({ '7': 100 }),
    });
    expect(d).toMatchObject({
      done: true,
      response: {
        deployedModel: { id: '7', model: 'projects/team-a/locations/europe-west4/models/iris', modelVersionId: '1' },
      },
    });
  });

  it("read back from the endpoint's stamp, waits on the DeployedModel's own generation, not the endpoint's", async () => {
    const stamped = { ...deployRef, generation: 5, extra: { ...deployRef.extra, [WATCHED_GENERATION_EXTRA]: '1' } };
    const d = await derive('deployModel', stamped, {
      'deployedmodels/iris-7': deployed(1, 'True'),
      'predictionendpoints/iris': endpoint({ '7': 100 }),
    });
    expect(d.done).toBe(true);
  });

  it("fails with the Stalled condition's reason", async () => {
    const d = await derive('deployModel', deployRef, {
      'deployedmodels/iris-7': deployed(1, 'False', {
        reason: 'ImagePullBackOff',
        message: 'image registry.example/iris:9 cannot be pulled',
      }),
      'predictionendpoints/iris': endpoint({ '3': 100 }),
    });
    expect(d.done).toBe(true);
    expect('error' in d && d.error.status).toBe('FAILED_PRECONDITION');
    expect('error' in d && d.error.message).toContain(
      'ImagePullBackOff: image registry.example/iris:9 cannot be pulled',
    );
  });
});

describe('the delete operations', () => {
  it('end once the object with the deleted uid is gone', async () => {
    const still = await derive(
      'undeployModel',
      { object: 'iris-7', uid: 'dm-uid' },
      { 'deployedmodels/iris-7': deployed(1, 'True') },
    );
    expect(still.done).toBe(false);
    expect(await derive('undeployModel', { object: 'iris-7', uid: 'dm-uid' }, {})).toMatchObject({
      done: true,
      response: {},
    });
    expect(await derive('deleteEndpoint', { uid: 'pe-uid' }, {})).toMatchObject({ done: true, response: {} });
  });
});

describe('the createEndpoint operation', () => {
  it('answers the Endpoint as GetEndpoint does once it is reconciled', async () => {
    const pe = endpoint({});
    pe.status = {
      ...(pe.status as object),
      observedGeneration: 3,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '' }],
    };
    const d = await derive('createEndpoint', { generation: 3 }, { 'predictionendpoints/iris': pe });
    expect(d).toMatchObject({ done: true, response: { name: RESOURCE, displayName: 'iris' } });
  });
});
