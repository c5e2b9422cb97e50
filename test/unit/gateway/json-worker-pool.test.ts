import { afterAll, describe, expect, it } from 'vitest';
import { GoogleApiError } from '../../../src/gateway/google-errors.js';
import { JsonWorkerPool } from '../../../src/gateway/json-worker-pool.js';
import {
  parseJsonRequest,
  serializeUpstreamRequest,
  vertexAnswer,
  type ServingModel,
} from '../../../src/gateway/prediction/json.js';

const model: ServingModel = {
  id: '7',
  deployedModelName: 'fraud',
  model: 'projects/p/locations/l/models/fraud@2',
  modelDisplayName: 'fraud',
  modelVersionId: '2',
  origin: 'http://127.0.0.1:9',
};
const pool = new JsonWorkerPool(2, 4);
afterAll(() => pool.close());

/** What the event-loop path answers for the same input: the result text, or the refusal. */
function onEventLoop(work: () => string): { text: string } | { status: string; httpCode: number; message: string } {
  try {
    return { text: work() };
  } catch (err) {
    const e = err as GoogleApiError;
    return { status: e.status, httpCode: e.httpCode, message: e.message };
  }
}

async function onWorker(
  work: Promise<{ bytes: Buffer }>,
): Promise<{ text: string } | { status: string; httpCode: number; message: string }> {
  try {
    return { text: (await work).bytes.toString('utf8') };
  } catch (err) {
    expect(err).toBeInstanceOf(GoogleApiError);
    const e = err as GoogleApiError;
    return { status: e.status, httpCode: e.httpCode, message: e.message };
  }
}

const requests: Record<string, string> = {
  numbers: JSON.stringify({
    instances: Array.from({ length: 2000 }, (_, i) => [i, i / 3, -i]),
    parameters: { threshold: 0.5 },
  }),
  objects: JSON.stringify({ instances: Array.from({ length: 500 }, (_, i) => ({ amount: i, name: `n${i}` })) }),
  tooDeep: `{"instances":[${'['.repeat(150)}1${']'.repeat(150)}]}`,
  infinite: '{"instances":[{"x":[1,2,1e400]}]}',
  malformed: '{"instances":[1,2',
  noInstances: '{"inputs":[1]}',
  empty: '{"instances":[]}',
  ragged: '{"instances":[[1,2],[3]]}',
};

describe('JsonWorkerPool', () => {
  for (const [name, body] of Object.entries(requests)) {
    for (const protocol of ['KServeV1', 'OpenInferenceV2'] as const) {
      it(`builds the model server request for ${name} (${protocol}) exactly as the event loop does`, async () => {
        const expected = onEventLoop(() =>
          serializeUpstreamRequest(protocol, parseJsonRequest(Buffer.from(body)), model.id),
        );
        expect(
          await onWorker(pool.run({ kind: 'request', body: [Buffer.from(body)], protocol, modelId: model.id })),
        ).toEqual(expected);
      });
    }
  }

  it('counts the instances and checks a body sent without a protocol (the call is refused later)', async () => {
    const result = await pool.run({
      kind: 'request',
      body: [Buffer.from(requests['numbers'] as string)],
      protocol: undefined,
      modelId: '',
    });
    expect(result.instanceCount).toBe(2000);
    expect(result.bytes.length).toBe(0);
    await expect(
      pool.run({
        kind: 'request',
        body: [Buffer.from(requests['tooDeep'] as string)],
        protocol: undefined,
        modelId: '',
      }),
    ).rejects.toMatchObject({
      status: 'INVALID_ARGUMENT',
      httpCode: 400,
      message: expect.stringContaining('nested more than 100 levels') as unknown,
    });
  });

  const answers: Record<string, [string, 'predict' | 'explain', 'KServeV1' | 'OpenInferenceV2', number]> = {
    v1Predict: [
      JSON.stringify({ predictions: Array.from({ length: 300 }, (_, i) => ({ score: i / 300 })) }),
      'predict',
      'KServeV1',
      300,
    ],
    v1Explain: [JSON.stringify({ explanations: [{ a: 1 }], predictions: [0.2] }), 'explain', 'KServeV1', 1],
    v2Predict: [
      JSON.stringify({ outputs: [{ name: 'score', datatype: 'FP32', shape: [3, 1], data: [0.1, 0.2, 0.3] }] }),
      'predict',
      'OpenInferenceV2',
      3,
    ],
    notJson: ['<html>oops', 'predict', 'KServeV1', 1],
    noPredictions: ['{"result":1}', 'predict', 'KServeV1', 1],
    wrongCount: [
      JSON.stringify({ outputs: [{ name: 'score', datatype: 'FP32', shape: [2], data: [0.1, 0.2] }] }),
      'predict',
      'OpenInferenceV2',
      3,
    ],
  };
  for (const [name, [body, method, protocol, count]] of Object.entries(answers)) {
    it(`reads the ${name} answer exactly as the event loop does`, async () => {
      const expected = onEventLoop(() => vertexAnswer(method, protocol, Buffer.from(body), count, model));
      expect(
        await onWorker(
          pool.run({ kind: 'answer', body: [Buffer.from(body)], method, protocol, instanceCount: count, model }),
        ),
      ).toEqual(expected);
    });
  }

  it('leaves the caller its body and runs more tasks than workers', async () => {
    const body = Buffer.from(requests['objects'] as string);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => pool.run({ kind: 'request', body: [body], protocol: 'KServeV1', modelId: '7' })),
    );
    expect(new Set(results.map((r) => r.bytes.toString()))).toEqual(
      new Set([JSON.stringify(JSON.parse(body.toString()))]),
    );
    expect(body.toString()).toBe(requests['objects']);
  });

  it('joins a body received in pieces, and moves the pieces that own their memory rather than copying them', async () => {
    const text = requests['objects'] as string;
    const cut = [0, 3000, 7000, 7010, text.length];
    // Owned pieces (as node:http's body chunks are), one small piece of Node's shared pool, and two views of one buffer.
    const owned = (from: number, to: number): Buffer =>
      Buffer.from(new TextEncoder().encode(text.slice(from, to)).buffer);
    const shared = Buffer.from(text.slice(cut[2], cut[4]));
    const pieces = [
      owned(cut[0] as number, cut[1] as number),
      owned(cut[1] as number, cut[2] as number),
      shared.subarray(0, 10),
      shared.subarray(10),
    ];
    const pooled = Buffer.from('{"instances":[1]}');
    const expected = JSON.stringify(JSON.parse(text));
    expect(
      (await pool.run({ kind: 'request', body: pieces, protocol: 'KServeV1', modelId: '7' }, true)).bytes.toString(),
    ).toBe(expected);
    expect(pieces.map((p) => p.byteLength)).toEqual([0, 0, 10, text.length - 7010]);
    expect(
      (await pool.run({ kind: 'request', body: [pooled], protocol: 'KServeV1', modelId: '7' }, true)).bytes.toString(),
    ).toBe('{"instances":[1]}');
    expect(pooled.toString()).toBe('{"instances":[1]}');
  });

  it('answers 503 UNAVAILABLE beyond its queue bound', async () => {
    const small = new JsonWorkerPool(1, 1);
    try {
      const body = Buffer.from(requests['numbers'] as string);
      const runs = Array.from({ length: 4 }, () =>
        small.run({ kind: 'request', body: [body], protocol: 'KServeV1', modelId: '7' }).then(
          () => 'done',
          (err: GoogleApiError) => `${err.httpCode} ${err.status}`,
        ),
      );
      const outcomes = await Promise.all(runs);
      expect(outcomes.filter((o) => o === 'done').length).toBeGreaterThanOrEqual(2);
      expect(outcomes).toContain('503 UNAVAILABLE');
    } finally {
      await small.close();
    }
  });
});
