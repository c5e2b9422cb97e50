import { describe, expect, it } from 'vitest';
import { answerError, failureError } from '../../../../src/gateway/prediction/errors.js';
import {
  readExplanations,
  readPredictions,
  upstreamBody,
  upstreamPath,
  UpstreamAnswerError,
} from '../../../../src/gateway/prediction/protocols.js';
import type { ResolvedModel } from '../../../../src/gateway/routing-table.js';
import { UpstreamFailure, type UpstreamResponse } from '../../../../src/gateway/upstream.js';
import { explain, FRAUD_MODEL_VERSIONS, predict, toPayment } from '../../../../dev/models/demo/index.js';

describe('upstream paths and bodies', () => {
  it('follow KServe V1 and the Open Inference Protocol', () => {
    expect(upstreamPath('KServeV1', 'fraud', 'predict')).toBe('/v1/models/fraud:predict');
    expect(upstreamPath('KServeV1', 'fraud', 'explain')).toBe('/v1/models/fraud:explain');
    expect(upstreamPath('KServeV1', 'fraud', 'rawPredict')).toBe('/v1/models/fraud:predict');
    expect(upstreamPath('OpenInferenceV2', 'fraud', 'predict')).toBe('/v2/models/fraud/infer');
    expect(upstreamPath('OpenInferenceV2', 'fraud', 'explain')).toBe('/v2/models/fraud/explain');
    expect(upstreamBody('KServeV1', [[1]], undefined)).toEqual({ instances: [[1]] });
    expect(upstreamBody('KServeV1', [[1]], { k: 1 })).toEqual({ instances: [[1]], parameters: { k: 1 } });
  });
});

describe('reading answers', () => {
  it('takes V1 predictions and explanations as they are', () => {
    expect(readPredictions('KServeV1', { predictions: [1, 2] }, 2)).toEqual([1, 2]);
    expect(readExplanations('KServeV1', { explanations: [{ a: 1 }], predictions: [0.5] }, 1)).toEqual({
      explanations: [{ a: 1 }],
      predictions: [0.5],
    });
    expect(() => readPredictions('KServeV1', { outputs: [] }, 1)).toThrow(UpstreamAnswerError);
  });

  it('decodes the V2 explanation output and keeps the other outputs as predictions', () => {
    const answer = {
      outputs: [
        { name: 'p', shape: [1], datatype: 'FP64', data: [0.7] },
        { name: 'explanation', shape: [1], datatype: 'BYTES', data: [JSON.stringify({ attributions: [] })] },
      ],
    };
    expect(readExplanations('OpenInferenceV2', answer, 1)).toEqual({
      explanations: [{ attributions: [] }],
      predictions: [0.7],
    });
    expect(() => readExplanations('OpenInferenceV2', { outputs: [answer.outputs[0]] }, 1)).toThrow(
      /without an output named "explanation"/,
    );
  });
});

describe('error mapping', () => {
  const model: ResolvedModel = {
    id: '42',
    namespace: 'ns',
    deployedModelName: 'fraud-v1',
    model: 'm',
    modelVersionId: undefined,
    modelDisplayName: 'm',
    backend: undefined,
    unusable: undefined,
  };
  const res = (status: number, body: unknown): UpstreamResponse => {
    const bytes = Buffer.from(JSON.stringify(body));
    return {
      status,
      headers: {},
      pieces: [bytes],
      size: bytes.length,
      target: { origin: 'http://10.0.0.1:8080', basePath: '' },
      retried: false,
    };
  };

  it.each([
    [400, 400, 'INVALID_ARGUMENT'],
    [422, 400, 'INVALID_ARGUMENT'],
    [429, 429, 'RESOURCE_EXHAUSTED'],
    [500, 502, 'INTERNAL'],
    [404, 502, 'INTERNAL'],
    [503, 503, 'UNAVAILABLE'],
    [504, 504, 'DEADLINE_EXCEEDED'],
  ] as const)(
    'a model server %i becomes %i %s naming the deployed model and the server message',
    (status, code, name) => {
      const err = answerError(model, res(status, { error: 'feature x missing' }));
      expect(err.body().error).toEqual({
        code,
        status: name,
        message: `Deployed model 42 (fraud-v1): the model server at http://10.0.0.1:8080 answered ${status}: feature x missing`,
      });
    },
  );

  it.each([
    ['connect', 503, 'UNAVAILABLE'],
    ['timeout', 504, 'DEADLINE_EXCEEDED'],
    ['reset', 503, 'UNAVAILABLE'],
    ['broken', 502, 'INTERNAL'],
  ] as const)('a %s failure becomes %i %s naming the deployed model', (kind, code, name) => {
    const err = failureError(model, new UpstreamFailure(kind, 'why'));
    expect(err.httpCode).toBe(code);
    expect(err.status).toBe(name);
    expect(err.message).toMatch(/^Deployed model 42 \(fraud-v1\): .*why/);
  });
});

describe('the demo fraud model', () => {
  const risky = toPayment(
    { amount: 2400, hourOfDay: 3, foreignMerchant: true, cardPresent: false, transactionsLast24h: 14 },
    'i',
  );
  const usual = toPayment([25, 13, 0, 1, 2], 'i');

  it('scores a risky payment as fraud and an ordinary one as legitimate, differently per version', () => {
    expect(predict(FRAUD_MODEL_VERSIONS.v1, risky).label).toBe('fraud');
    expect(predict(FRAUD_MODEL_VERSIONS.v1, usual).label).toBe('legitimate');
    const middling = toPayment(
      { amount: 600, hourOfDay: 22, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 6 },
      'i',
    );
    expect(predict(FRAUD_MODEL_VERSIONS.v1, middling).fraudProbability).not.toBe(
      predict(FRAUD_MODEL_VERSIONS.v2, middling).fraudProbability,
    );
  });

  it('explains with attributions that sum to the change from the baseline output', () => {
    const [a] = explain(FRAUD_MODEL_VERSIONS.v2, risky).attributions;
    const sum = Object.values(a?.featureAttributions ?? {}).reduce((s, v) => s + v, 0);
    expect(sum).toBeCloseTo((a?.instanceOutputValue ?? 0) - (a?.baselineOutputValue ?? 0), 4);
    expect(a?.featureAttributions.amount).toBeGreaterThan(0);
    expect(a?.featureAttributions.cardPresent).toBeGreaterThan(0); // card not present raises the risk
  });

  it('refuses instances it cannot read, naming the field', () => {
    expect(() => toPayment({ amount: 1 }, 'instances[0]')).toThrow('instances[0].hourOfDay is missing');
    expect(() => toPayment([1, 2], 'instances[3]')).toThrow('instances[3] has 2 values');
  });
});
