import { describe, expect, it } from 'vitest';
import type { DeployedModelSummary } from '../../../src/api/prediction/v1/endpoint-schema.js';
import type { KubeObject } from '../../../src/runtime/kube-object.js';
import { computePredictionEndpointStatus, effectiveSplit, type PredictionEndpointWorld } from '../../../src/reconcilers/prediction-endpoint-status.js';

function world(split: Record<string, number>, status?: Record<string, unknown>): PredictionEndpointWorld {
  const endpoint: KubeObject = { metadata: { name: 'ep', namespace: 'ns', generation: 2 }, spec: { displayName: 'E', trafficSplit: split }, ...(status ? { status } : {}) };
  return { endpoint, models: [], states: new Map(), specErrors: [], project: 'p', location: 'l', modelReadiness: () => undefined, now: '2026-01-01T00:00:00Z' };
}

const model = (id: string, ready: DeployedModelSummary['ready']): DeployedModelSummary => ({ id, model: 'm', deployedModelRef: `dm-${id}`, ready });

describe('the effective traffic split', () => {
  it('takes the first split at once: there is nothing older to serve', () => {
    expect(effectiveSplit(world({ a: 100 }), undefined, [model('a', 'False')])).toEqual({ split: { a: 100 }, waitingFor: [] });
  });

  it('keeps the previous split through a blue/green switch until the new model is deployed, then moves', () => {
    const w = world({ a: 0, b: 100 });
    expect(effectiveSplit(w, { a: 100 }, [model('a', 'True'), model('b', 'False')])).toEqual({ split: { a: 100 }, waitingFor: ['b'] });
    expect(effectiveSplit(w, { a: 100 }, [model('a', 'True'), model('b', 'Unknown')]).split).toEqual({ a: 100 });
    expect(effectiveSplit(w, { a: 100 }, [model('a', 'True'), model('b', 'True')])).toEqual({ split: { a: 0, b: 100 }, waitingFor: [] });
  });

  it('keeps a split in effect when one of its models later fails: no traffic is moved silently', () => {
    expect(effectiveSplit(world({ a: 50, b: 50 }), { a: 50, b: 50 }, [model('a', 'True'), model('b', 'False')])).toEqual({ split: { a: 50, b: 50 }, waitingFor: [] });
  });

  it('reports TrafficSplitPending naming the models waited for, and publishes status.trafficSplit', () => {
    const out = computePredictionEndpointStatus(world({ a: 0, b: 100 }, { trafficSplit: { a: 100 } }));
    // No deployed models in this world: the keys resolve to nothing, which is reported first.
    expect(out.verdict.reason).toBe('TrafficSplitUnresolved');
    expect(out.status.trafficSplit).toEqual({ a: 100 });
  });
});
