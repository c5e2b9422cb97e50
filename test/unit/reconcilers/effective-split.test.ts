import { describe, expect, it } from 'vitest';
import type { DeployedModelSummary } from '../../../src/api/prediction/v1/endpoint-schema.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { resolveModelStates } from '../../../src/reconcilers/deployed-model-ids.js';
import {
  computePredictionEndpointStatus,
  effectiveSplit,
  type PredictionEndpointWorld,
} from '../../../src/reconcilers/prediction-endpoint-status.js';
import { deployedModel } from './fixtures.js';

function world(split: Record<string, number>, status?: Record<string, unknown>): PredictionEndpointWorld {
  const endpoint: KubeObject = {
    metadata: { name: 'ep', namespace: 'ns', generation: 2 },
    spec: { displayName: 'E', trafficSplit: split },
    ...(status ? { status } : {}),
  };
  return {
    endpoint,
    models: [],
    states: new Map(),
    specErrors: [],
    project: 'p',
    location: 'l',
    modelReadiness: () => undefined,
    now: '2026-01-01T00:00:00Z',
  };
}

const model = (id: string, ready: DeployedModelSummary['ready']): DeployedModelSummary => ({
  id,
  model: 'm',
  deployedModelRef: `dm-${id}`,
  ready,
});

describe('the effective traffic split', () => {
  it('takes the first split at once: there is nothing older to serve', () => {
    expect(effectiveSplit(world({ a: 100 }), undefined, [model('a', 'False')])).toEqual({
      split: { a: 100 },
      waitingFor: [],
    });
  });

  it('keeps the previous split through a blue/green switch until the new model is deployed, then moves', () => {
    const w = world({ a: 0, b: 100 });
    expect(effectiveSplit(w, { a: 100 }, [model('a', 'True'), model('b', 'False')])).toEqual({
      split: { a: 100 },
      waitingFor: ['b'],
    });
    expect(effectiveSplit(w, { a: 100 }, [model('a', 'True'), model('b', 'Unknown')]).split).toEqual({ a: 100 });
    expect(effectiveSplit(w, { a: 100 }, [model('a', 'True'), model('b', 'True')])).toEqual({
      split: { a: 0, b: 100 },
      waitingFor: [],
    });
  });

  it('keeps a split in effect when one of its models later fails: no traffic is moved silently', () => {
    expect(
      effectiveSplit(world({ a: 50, b: 50 }), { a: 50, b: 50 }, [model('a', 'True'), model('b', 'False')]),
    ).toEqual({ split: { a: 50, b: 50 }, waitingFor: [] });
  });

  it('reports TrafficSplitPending naming the models waited for, and publishes status.trafficSplit', () => {
    const out = computePredictionEndpointStatus(world({ a: 0, b: 100 }, { trafficSplit: { a: 100 } }));
    // No deployed models in this world: the keys resolve to nothing, which is reported first.
    expect(out.verdict.reason).toBe('TrafficSplitUnresolved');
    expect(out.status.trafficSplit).toEqual({ a: 100 });
  });

  describe('a model in the split in effect that is not Ready', () => {
    /** Endpoint `ep` with split {1: 50, 2: 50} in effect, models "a" (id 1) and "b" (id 2) with the given Ready statuses. */
    function withModels(
      spec: Record<string, number>,
      inEffect: Record<string, number>,
      ready: Record<string, 'True' | 'False' | undefined>,
    ): PredictionEndpointWorld {
      const models = [
        deployedModel('a', 'ep', { id: '1' }).build(),
        deployedModel('b', 'ep', { id: '2' }).build(),
        deployedModel('c', 'ep', { id: '3' }).build(),
      ];
      const readiness = (m: KubeObject) => {
        const status = ready[m.metadata.name ?? ''];
        return status === undefined
          ? undefined
          : { status, reason: status === 'True' ? ('Reconciled' as const) : ('Unschedulable' as const) };
      };
      return {
        ...world(spec, { trafficSplit: inEffect }),
        models,
        states: resolveModelStates(models, () => true, new Map()),
        modelReadiness: readiness,
      };
    }

    it('keeps its share and makes the endpoint DeployedModelUnavailable, naming it, its id, share and reason', () => {
      const out = computePredictionEndpointStatus(
        withModels({ '1': 50, '2': 50 }, { '1': 50, '2': 50 }, { a: 'False', b: 'True', c: 'True' }),
      );
      expect(out.status.trafficSplit).toEqual({ '1': 50, '2': 50 });
      expect(out.verdict).toMatchObject({ status: 'False', reason: 'DeployedModelUnavailable' });
      expect(out.verdict.message).toContain(
        'status.trafficSplit[1]: 50% of calls go to DeployedModel "a" (id 1), which is not Ready (Unschedulable)',
      );
      expect(out.verdict.message).toContain('answer 503 UNAVAILABLE and are not moved to other models');
      expect(out.verdict.message).not.toContain('"b"');
    });

    it('is not reported for a model with no share, nor for one whose readiness is not known yet', () => {
      expect(
        computePredictionEndpointStatus(
          withModels({ '1': 0, '2': 100 }, { '1': 0, '2': 100 }, { a: 'False', b: 'True' }),
        ).verdict.reason,
      ).toBe('Reconciled');
      expect(
        computePredictionEndpointStatus(withModels({ '1': 50, '2': 50 }, { '1': 50, '2': 50 }, { b: 'True' })).verdict
          .reason,
      ).toBe('Reconciled');
    });

    it('while a switch is pending, TrafficSplitPending also says which calls of the split still serving fail', () => {
      const out = computePredictionEndpointStatus(
        withModels({ '3': 100 }, { '1': 50, '2': 50 }, { a: 'False', b: 'True', c: 'False' }),
      );
      expect(out.status.trafficSplit).toEqual({ '1': 50, '2': 50 });
      expect(out.verdict.reason).toBe('TrafficSplitPending');
      expect(out.verdict.message).toContain('spec.trafficSplit[3]: waits until');
      expect(out.verdict.message).toContain(
        'meanwhile status.trafficSplit[1]: 50% of calls go to DeployedModel "a" (id 1)',
      );
    });
  });
});
