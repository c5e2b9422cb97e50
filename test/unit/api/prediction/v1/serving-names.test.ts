import { describe, expect, it } from 'vitest';
import { containerBackend, servingName } from '../../../../../src/api/prediction/v1/serving-names.js';
import { upstreamBody, upstreamPath } from '../../../../../src/gateway/prediction/protocols.js';

const model = { name: 'churn', endpointName: 'fraud-scoring', id: '42' };

describe('containerBackend', () => {
  it('routes a KServeV1 or OpenInferenceV2 container through the Service the operator creates, port http', () => {
    expect(containerBackend(model, { imageUri: 'i', protocol: 'KServeV1' })).toEqual({
      service: { name: 'dm-churn', port: 'http' },
      protocol: 'KServeV1',
      modelName: 'churn',
    });
    expect(
      containerBackend(
        { ...model, name: 'churn.v3' },
        { imageUri: 'i', protocol: 'OpenInferenceV2', modelName: 'xgb' },
      ),
    ).toEqual({
      service: { name: servingName('churn.v3'), port: 'http' },
      protocol: 'OpenInferenceV2',
      modelName: 'xgb',
    });
  });

  it("routes the Vertex protocol (the default) to the container's predict route, Vertex's default when it names none", () => {
    expect(containerBackend(model, { imageUri: 'i' })).toEqual({
      service: { name: 'dm-churn', port: 'http' },
      protocol: 'Vertex',
      predictRoute: '/v1/endpoints/fraud-scoring/deployedModels/42:predict',
      modelName: 'churn',
    });
    expect(containerBackend(model, { imageUri: 'i', predictRoute: '/predict' })).toMatchObject({
      protocol: 'Vertex',
      predictRoute: '/predict',
    });
  });
});

describe('the Vertex protocol on the wire', () => {
  it('posts :predict and :rawPredict to the predict route with the Vertex body, and has no :explain', () => {
    expect(upstreamPath('Vertex', 'churn', 'predict', '/predict')).toBe('/predict');
    expect(upstreamPath('Vertex', 'churn', 'rawPredict', '/predict')).toBe('/predict');
    expect(() => upstreamPath('Vertex', 'churn', 'explain', '/predict')).toThrow(
      /FAILED_PRECONDITION|no explain route/,
    );
    expect(upstreamBody('Vertex', [[1, 2]], { threshold: 0.5 })).toEqual({
      instances: [[1, 2]],
      parameters: { threshold: 0.5 },
    });
  });
});
