import { describe, expect, it } from 'vitest';
import {
  computePredictionEndpointStatus,
  type PredictionEndpointWorld,
} from '../../../src/reconcilers/prediction-endpoint-status.js';
import { computeDeployedModelStatus, type DeployedModelWorld } from '../../../src/reconcilers/deployed-model-status.js';
import { resolveModelStates, type ModelState } from '../../../src/reconcilers/deployed-model-ids.js';
import { computeEtag } from '../../../src/api/prediction/v1/etag.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import type { Condition } from '../../../src/runtime/conditions.js';
import { deployedModel, endpoint } from './fixtures.js';

const NOW = '2026-02-01T10:00:00Z';
const LATER = '2026-02-01T11:00:00Z';

function endpointWorld(
  ep: KubeObject,
  models: KubeObject[],
  overrides: Partial<PredictionEndpointWorld> = {},
): PredictionEndpointWorld {
  return {
    endpoint: ep,
    models,
    states: resolveModelStates(models, () => true, new Map()),
    specErrors: [],
    modelReadiness: () => undefined,
    project: 'demo',
    location: 'us-central1',
    now: NOW,
    ...overrides,
  };
}

function modelWorld(
  model: KubeObject,
  ep: KubeObject | undefined,
  siblings: KubeObject[] = [model],
  overrides: Partial<DeployedModelWorld> = {},
): DeployedModelWorld {
  const state: ModelState | undefined =
    ep === undefined ? undefined : resolveModelStates(siblings, () => true, new Map()).get(model.metadata.name ?? '');
  return {
    model,
    endpoint: ep,
    state,
    specErrors: [],
    backend: { state: 'none' },
    project: 'demo',
    location: 'us-central1',
    now: NOW,
    ...overrides,
  };
}

function ready(status: { conditions: Condition[] }): Condition | undefined {
  return status.conditions.find((c) => c.type === 'Ready');
}

describe('PredictionEndpoint status', () => {
  it('is Reconciled with its name, etag, times and deployed models', () => {
    const ep = endpoint('ep1', { displayName: 'Ep', trafficSplit: { '1': 100 } })
      .generation(3)
      .build();
    const dm = deployedModel('dm1', 'ep1', { id: '1', displayName: 'one' }).created('2026-01-05T00:00:00Z').build();
    const { status, verdict, releaseFinalizer } = computePredictionEndpointStatus(endpointWorld(ep, [dm]));
    expect(verdict).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(releaseFinalizer).toBe(false);
    expect(status.name).toBe('projects/demo/locations/us-central1/endpoints/ep1');
    expect(status.etag).toBe(computeEtag(ep.spec));
    expect(status.observedGeneration).toBe(3);
    expect(status.createTime).toBe('2026-01-01T00:00:00Z');
    expect(status.deployedModels).toEqual([
      {
        id: '1',
        model: 'projects/demo/locations/us-central1/models/m1',
        displayName: 'one',
        createTime: '2026-01-05T00:00:00Z',
        deployedModelRef: 'dm1',
        automaticResources: { minReplicaCount: 1 },
        ready: 'Unknown',
      },
    ]);
    expect(ready(status)).toMatchObject({ status: 'True', observedGeneration: 3, lastTransitionTime: NOW });
  });

  it('orders deployed models numerically by id and leaves duplicates and invalid models out', () => {
    const ep = endpoint('ep1').build();
    const a = deployedModel('a', 'ep1', { id: '10' }).created('2026-01-02T00:00:00Z').build();
    const b = deployedModel('b', 'ep1', { id: '9' }).created('2026-01-02T00:00:00Z').build();
    const dup = deployedModel('c', 'ep1', { id: '9' }).created('2026-01-03T00:00:00Z').build();
    const bad = deployedModel('d', 'ep1', { id: '5' }).build();
    const states = resolveModelStates([a, b, dup, bad], (m) => m.metadata.name !== 'd', new Map());
    const { status } = computePredictionEndpointStatus(endpointWorld(ep, [a, b, dup, bad], { states }));
    expect(status.deployedModels.map((d) => [d.id, d.deployedModelRef])).toEqual([
      ['9', 'b'],
      ['10', 'a'],
    ]);
  });

  it('reports InvalidSpec with the field path', () => {
    const ep = endpoint('ep1').build();
    const { verdict } = computePredictionEndpointStatus(
      endpointWorld(ep, [], {
        specErrors: [
          { field: 'spec.trafficSplit', type: 'FieldValueInvalid', value: { a: 1 }, detail: 'must sum to 100' },
        ],
      }),
    );
    expect(verdict.status).toBe('False');
    expect(verdict.reason).toBe('InvalidSpec');
    expect(verdict.message).toContain('spec.trafficSplit: Invalid value');
  });

  it('reports TrafficSplitUnresolved naming the split keys without a deployed model', () => {
    const ep = endpoint('ep1', { displayName: 'x', trafficSplit: { '1': 60, '2': 40 } }).build();
    const dm = deployedModel('dm1', 'ep1', { id: '1' }).build();
    const { verdict } = computePredictionEndpointStatus(endpointWorld(ep, [dm]));
    expect(verdict).toMatchObject({ status: 'False', reason: 'TrafficSplitUnresolved' });
    expect(verdict.message).toContain('spec.trafficSplit[2]');
    expect(verdict.message).not.toContain('spec.trafficSplit[1]');
  });

  it('resolves the split once the model appears (GitOps order)', () => {
    const ep = endpoint('ep1', { displayName: 'x', trafficSplit: { '7': 100 } }).build();
    const before = computePredictionEndpointStatus(endpointWorld(ep, []));
    expect(before.verdict.reason).toBe('TrafficSplitUnresolved');
    const after = computePredictionEndpointStatus(
      endpointWorld({ ...ep, status: before.status }, [deployedModel('m', 'ep1', { id: '7' }).build()], { now: LATER }),
    );
    expect(after.verdict.reason).toBe('Reconciled');
    expect(ready(after.status)?.lastTransitionTime).toBe(LATER);
  });

  it('blocks deletion while DeployedModels reference it and lists them', () => {
    const ep = endpoint('ep1').deleting().build();
    const dms = [deployedModel('z', 'ep1', { id: '1' }).build(), deployedModel('a', 'ep1').build()];
    const { verdict, releaseFinalizer } = computePredictionEndpointStatus(endpointWorld(ep, dms));
    expect(releaseFinalizer).toBe(false);
    expect(verdict).toMatchObject({ status: 'False', reason: 'DeletionBlocked' });
    expect(verdict.message).toContain('a, z');
  });

  it('releases its finalizer once nothing references it', () => {
    const ep = endpoint('ep1').deleting().build();
    expect(computePredictionEndpointStatus(endpointWorld(ep, [])).releaseFinalizer).toBe(true);
  });

  it('produces an identical status when reconciled again with nothing changed (no write)', () => {
    const ep = endpoint('ep1', { displayName: 'x', trafficSplit: { '1': 100 } }).build();
    const dm = deployedModel('dm1', 'ep1', { id: '1' }).build();
    const first = computePredictionEndpointStatus(endpointWorld(ep, [dm]));
    const second = computePredictionEndpointStatus(
      endpointWorld({ ...ep, status: first.status }, [dm], { now: LATER }),
    );
    expect(second.status).toEqual(first.status);
  });

  it('keeps lastTransitionTime when only the reason changes, moves it when the status changes', () => {
    const ep = endpoint('ep1', { displayName: 'x', trafficSplit: { '1': 100 } }).build();
    const unresolved = computePredictionEndpointStatus(endpointWorld(ep, []));
    const invalid = computePredictionEndpointStatus(
      endpointWorld({ ...ep, status: unresolved.status }, [], {
        now: LATER,
        specErrors: [{ field: 'spec.displayName', type: 'FieldValueRequired', value: undefined, detail: 'required' }],
      }),
    );
    expect(ready(invalid.status)).toMatchObject({ status: 'False', reason: 'InvalidSpec', lastTransitionTime: NOW });
    const fixed = computePredictionEndpointStatus(
      endpointWorld({ ...ep, status: invalid.status }, [deployedModel('m', 'ep1', { id: '1' }).build()], {
        now: LATER,
      }),
    );
    expect(ready(fixed.status)).toMatchObject({ status: 'True', lastTransitionTime: LATER });
  });

  it('moves updateTime only when metadata.generation changes, and keeps createTime', () => {
    const ep = endpoint('ep1').build();
    const first = computePredictionEndpointStatus(endpointWorld(ep, []));
    expect(first.status.updateTime).toBe(first.status.createTime);
    const same = computePredictionEndpointStatus(endpointWorld({ ...ep, status: first.status }, [], { now: LATER }));
    expect(same.status.updateTime).toBe(first.status.updateTime);
    const bumped = { ...ep, metadata: { ...ep.metadata, generation: 2 }, status: first.status };
    const next = computePredictionEndpointStatus(endpointWorld(bumped, [], { now: LATER }));
    expect(next.status.updateTime).toBe(LATER);
    expect(next.status.createTime).toBe(first.status.createTime);
    expect(ready(next.status)?.observedGeneration).toBe(2);
  });
});

describe('DeployedModel status', () => {
  it('is EndpointNotFound until the endpoint exists, naming spec.endpointRef.name', () => {
    const dm = deployedModel('dm1', 'missing').build();
    const { verdict, status } = computeDeployedModelStatus(modelWorld(dm, undefined));
    expect(verdict).toMatchObject({ status: 'False', reason: 'EndpointNotFound' });
    expect(verdict.message).toContain('spec.endpointRef.name');
    expect(status.id).toBeUndefined();
  });

  it('is Reconciled with its id, endpoint name and deploy time once deployed', () => {
    const ep = endpoint('ep1').created('2026-01-03T00:00:00Z').build();
    const dm = deployedModel('dm1', 'ep1', { id: '42' }).build();
    const { verdict, status } = computeDeployedModelStatus(modelWorld(dm, ep));
    expect(verdict).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(status).toMatchObject({
      id: '42',
      endpoint: 'projects/demo/locations/us-central1/endpoints/ep1',
      deployTime: '2026-01-03T00:00:00Z',
      observedGeneration: 1,
    });
  });

  it('reports a duplicate explicit id on the younger model and names the owner', () => {
    const ep = endpoint('ep1').build();
    const older = deployedModel('older', 'ep1', { id: '5' }).created('2026-01-01T00:00:00Z').build();
    const younger = deployedModel('younger', 'ep1', { id: '5' }).created('2026-01-02T00:00:00Z').build();
    const siblings = [younger, older];
    expect(computeDeployedModelStatus(modelWorld(older, ep, siblings)).verdict.reason).toBe('Reconciled');
    const { verdict } = computeDeployedModelStatus(modelWorld(younger, ep, siblings));
    expect(verdict).toMatchObject({ status: 'False', reason: 'DuplicateId' });
    expect(verdict.message).toContain('spec.id');
    expect(verdict.message).toContain('"older"');
  });

  it('reports InvalidSpec before anything else', () => {
    const dm = deployedModel('dm1', 'ep1').build();
    const { verdict } = computeDeployedModelStatus(
      modelWorld(dm, undefined, [dm], {
        specErrors: [{ field: 'spec.model', type: 'FieldValueInvalid', value: 'x', detail: 'bad' }],
      }),
    );
    expect(verdict).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(verdict.message).toContain('spec.model');
  });

  it('blocks undeploy while the split gives its id traffic, then releases', () => {
    const ep = endpoint('ep1', { displayName: 'x', trafficSplit: { '1': 70, '2': 30 } }).build();
    const dm = deployedModel('dm1', 'ep1', { id: '2' }).deleting().build();
    const blocked = computeDeployedModelStatus(modelWorld(dm, ep));
    expect(blocked.releaseFinalizer).toBe(false);
    expect(blocked.verdict).toMatchObject({ status: 'False', reason: 'UndeployBlocked' });
    expect(blocked.verdict.message).toContain('spec.trafficSplit[2]');
    expect(blocked.verdict.message).toContain('30%');
    const moved = { ...ep, spec: { displayName: 'x', trafficSplit: { '1': 100, '2': 0 } } };
    expect(computeDeployedModelStatus(modelWorld(dm, moved)).releaseFinalizer).toBe(true);
    const removed = { ...ep, spec: { displayName: 'x', trafficSplit: { '1': 100 } } };
    expect(computeDeployedModelStatus(modelWorld(dm, removed)).releaseFinalizer).toBe(true);
  });

  it('releases at once when its endpoint is gone', () => {
    const dm = deployedModel('dm1', 'ep1', { id: '2' }).deleting().build();
    expect(computeDeployedModelStatus(modelWorld(dm, undefined)).releaseFinalizer).toBe(true);
  });

  it('keeps deployTime once written and is stable when reconciled again', () => {
    const ep = endpoint('ep1').build();
    const dm = deployedModel('dm1', 'ep1', { id: '3' }).build();
    const first = computeDeployedModelStatus(modelWorld(dm, ep));
    const again = computeDeployedModelStatus(
      modelWorld({ ...dm, status: first.status }, ep, undefined, { now: LATER }),
    );
    expect(again.status).toEqual(first.status);
  });
});
