import { describe, expect, it } from 'vitest';
import { callEvents, CE_REQUEST_TYPE, CE_RESPONSE_TYPE } from '../../../src/gateway/cloudevents-sink.js';
import type { PredictionRecord } from '../../../src/gateway/prediction/record.js';

const record: PredictionRecord = {
  namespace: 'ml',
  endpoint: 'fraud',
  resourceName: 'projects/ml/locations/eu/endpoints/fraud',
  deployedModelId: '2',
  method: 'explain',
  code: 200,
  latencyMs: 3,
  request: Buffer.from('{"instances":[1]}'),
  response: '{"explanations":[]}',
};

describe('callEvents (KServe logger CloudEvents, HTTP binary mode)', () => {
  it("makes a request and a response event sharing one ce-id, with KServe's extensions", () => {
    const [request, response] = callEvents(record, 'id-1', '2026-01-01T00:00:00.000Z');
    const common = {
      'ce-specversion': '1.0',
      'ce-id': 'id-1',
      'ce-time': '2026-01-01T00:00:00.000Z',
      'ce-source': '/v1/projects/ml/locations/eu/endpoints/fraud:explain',
      'ce-inferenceservicename': 'fraud',
      'ce-namespace': 'ml',
      'ce-component': 'explainer',
      'ce-endpoint': '2',
      'ce-deployedmodel': '2',
      'ce-predictionendpoint': 'projects/ml/locations/eu/endpoints/fraud',
    };
    expect(request.headers).toEqual({ ...common, 'ce-type': CE_REQUEST_TYPE, 'content-type': 'application/json' });
    expect(response.headers).toEqual({ ...common, 'ce-type': CE_RESPONSE_TYPE, 'content-type': 'application/json' });
    expect(request.body.toString()).toBe('{"instances":[1]}');
    expect(response.body.toString()).toBe('{"explanations":[]}');
  });

  it("carries the bodies' own content types (rawPredict) and an empty body when there is none", () => {
    const [request, response] = callEvents(
      {
        ...record,
        method: 'rawPredict',
        request: undefined,
        requestContentType: 'application/octet-stream',
        responseContentType: 'text/csv',
      },
      'id-2',
      't',
    );
    expect(request.headers).toMatchObject({ 'content-type': 'application/octet-stream', 'ce-component': 'predictor' });
    expect(response.headers['content-type']).toBe('text/csv');
    expect(request.body.length).toBe(0);
  });
});
