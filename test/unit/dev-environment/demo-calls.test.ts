import { describe, expect, it } from 'vitest';
import { callableEndpoint, curlLines } from '../../../src/dev-environment/demo-calls.js';
import type { KubeObject } from '../../../src/runtime/kube-object.js';

function ep(name: string, split: Record<string, number>, models: { id: string; ready: string }[], url?: string): KubeObject {
  return { apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'PredictionEndpoint', metadata: { name }, spec: { trafficSplit: split }, status: { ...(url ? { url } : {}), deployedModels: models } };
}

describe('the endpoint dev calls', () => {
  it('is the first with a split over Ready deployed models and a URL', () => {
    const url = 'http://127.0.0.1:8090/v1/projects/endpoint-demo/locations/us-central1/endpoints/fraud-scoring';
    const ready = [{ id: '1', ready: 'True' }, { id: '2', ready: 'True' }];
    expect(callableEndpoint([
      ep('empty', {}, [], 'http://x'),
      ep('no-url', { '1': 70, '2': 30 }, ready),
      ep('one-down', { '1': 70, '2': 30 }, [{ id: '1', ready: 'True' }, { id: '2', ready: 'False' }], 'http://y'),
      ep('fraud-scoring', { '1': 70, '2': 30 }, ready, url),
    ])).toEqual({ name: 'fraud-scoring', url, split: { '1': 70, '2': 30 } });
    expect(callableEndpoint([ep('empty', {}, [], 'http://x')])).toBeUndefined();
  });

  it('prints a curl of :predict and a counted loop', () => {
    const lines = curlLines('http://127.0.0.1:8090/v1/projects/p/locations/l/endpoints/e');
    expect(lines[0]).toContain("curl -s -X POST http://127.0.0.1:8090/v1/projects/p/locations/l/endpoints/e:predict -H 'content-type: application/json' -d '{\"instances\":[{\"amount\":1250");
    expect(lines.at(-1)).toContain("| grep -o '\"deployedModelId\":\"[0-9]*\"' | sort | uniq -c");
  });
});
