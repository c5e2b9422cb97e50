import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { DeployedModelBackend } from '../../../../src/api/prediction/v1/backend.js';
import { answerFailure, renderGoogleError, toGoogleError } from '../../../../src/gateway/error-answer.js';
import { bodyWeight, CallerLimiter } from '../../../../src/gateway/fairness.js';
import { GoogleApiError } from '../../../../src/gateway/google-errors.js';
import { JsonWorkerPool } from '../../../../src/gateway/json-worker-pool.js';
import { admitCall as admitPath, isPredictionRequest, readCallPath } from '../../../../src/gateway/prediction/admit.js';
import { takeBudget } from '../../../../src/gateway/prediction/budget.js';
import { receivedBody } from '../../../../src/gateway/prediction/call.js';
import { chooseModel, findEndpoint, servingOf, type Serving } from '../../../../src/gateway/prediction/choose-model.js';
import { decodeAnswer } from '../../../../src/gateway/prediction/decode.js';
import { encodeRequest, type JsonExecutor } from '../../../../src/gateway/prediction/encode.js';
import type { ResolvedEndpoint, ResolvedModel } from '../../../../src/gateway/routing-table.js';

const readNamespace = (project: string): string | undefined => (/^[a-z0-9-]+$/.test(project) ? project : undefined);
const admitCall = (url: string, read: typeof readNamespace) => admitPath(readCallPath(url, read));

async function refusal(work: () => unknown): Promise<GoogleApiError> {
  const err = await Promise.resolve()
    .then(work)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(GoogleApiError);
  return err as GoogleApiError;
}

describe('admit', () => {
  it('serves POSTs of the prediction path only', () => {
    expect(isPredictionRequest('POST', '/v1/projects/p/locations/l/endpoints/e:predict')).toBe(true);
    expect(isPredictionRequest('GET', '/v1/projects/p/locations/l/endpoints/e:predict')).toBe(false);
    expect(isPredictionRequest('POST', '/v1/projects/p/locations/l/namespaces/n/services/s:resolve')).toBe(false);
  });

  it("leaves EndpointService's writes of the same path shape to the write API's routes", () => {
    for (const write of ['deployModel', 'undeployModel', 'mutateDeployedModel'])
      expect(isPredictionRequest('POST', `/v1/projects/p/locations/l/endpoints/e:${write}?$alt=json`)).toBe(false);
    expect(isPredictionRequest('POST', '/v1/projects/p/locations/l/endpoints/e:unknownMethod')).toBe(true);
  });

  it('reads the method, the resource name and the object the path names', () => {
    expect(admitCall('/v1/projects/team-a/locations/l/endpoints/fraud:explain?alt=json', readNamespace)).toEqual({
      method: 'explain',
      resourceName: 'projects/team-a/locations/l/endpoints/fraud',
      target: { namespace: 'team-a', name: 'fraud' },
    });
    expect(admitCall('/v1/projects/Not_A_Label/locations/l/endpoints/fraud%3ArawPredict', readNamespace)).toEqual({
      method: 'rawPredict',
      resourceName: 'projects/Not_A_Label/locations/l/endpoints/fraud',
      target: undefined,
    });
  });

  it('refuses a format other than JSON (400), then a method Vertex does not have (404)', async () => {
    expect(
      (await refusal(() => admitCall('/v1/projects/p/locations/l/endpoints/e:nope?alt=media', readNamespace))).httpCode,
    ).toBe(400);
    const unknown = await refusal(() => admitCall('/v1/projects/p/locations/l/endpoints/e:nope', readNamespace));
    expect([unknown.httpCode, unknown.message]).toEqual([
      404,
      'Method "nope" not found for projects/p/locations/l/endpoints/e: the calls are :predict, :explain and :rawPredict, and :streamRawPredict to stream :rawPredict\'s answer.',
    ]);
    expect((await refusal(() => admitCall('/v1/projects/p/locations/l/endpoints/e', readNamespace))).message).toMatch(
      /^Method \(none\) not found/,
    );
  });
});

const backend: DeployedModelBackend = {
  protocol: 'KServeV1',
  modelName: 'fraud',
  predictRoute: undefined,
} as DeployedModelBackend;
const model = (id: string, extra: Partial<ResolvedModel> = {}): ResolvedModel => ({
  id,
  namespace: 'team-a',
  deployedModelName: `fraud-${id}`,
  model: 'm',
  modelVersionId: undefined,
  modelDisplayName: 'm',
  backend,
  unusable: undefined,
  ...extra,
});
const endpoint = (split: ResolvedEndpoint['split'], models: ResolvedModel[]): ResolvedEndpoint => ({
  namespace: 'team-a',
  name: 'fraud',
  resourceName: 'projects/team-a/locations/l/endpoints/fraud',
  endpointId: 'fraud',
  split,
  signature: 's',
  models: new Map(models.map((m) => [m.id, m])),
  logging: { enabled: false, samplingRate: 0 },
});

describe('choose the model', () => {
  const call = admitCall('/v1/projects/team-a/locations/l/endpoints/fraud:predict', readNamespace);
  const first = {
    splitter: { pick: (_n: string, split: ResolvedEndpoint['split']) => split[0]?.[0] },
    sticky: undefined,
  };

  it('finds the authorised endpoint only: another object with that status.name is NOT_FOUND under auth', async () => {
    const ep = endpoint([], []);
    expect(findEndpoint({ endpoint: () => ep }, call, true)).toBe(ep);
    const elsewhere = { ...ep, namespace: 'team-b' };
    expect(findEndpoint({ endpoint: () => elsewhere }, call, false)).toBe(elsewhere);
    expect((await refusal(() => findEndpoint({ endpoint: () => elsewhere }, call, true))).message).toBe(
      'Endpoint projects/team-a/locations/l/endpoints/fraud not found.',
    );
    expect((await refusal(() => findEndpoint({ endpoint: () => undefined }, call, false))).httpCode).toBe(404);
  });

  it('takes the split, or the deployedModelId :explain names, and says why a model cannot be called', async () => {
    const ep = endpoint(
      [['1', 100]],
      [model('1'), model('2'), model('3', { unusable: 'its DeployedModel does not exist' })],
    );
    expect(chooseModel(ep, undefined, first).id).toBe('1');
    expect(chooseModel(ep, 2, first).id).toBe('2');
    expect((await refusal(() => chooseModel(ep, '9', first))).status).toBe('NOT_FOUND');
    expect((await refusal(() => chooseModel(ep, '3', first))).status).toBe('UNAVAILABLE');
    expect((await refusal(() => chooseModel(endpoint([], [model('1')]), undefined, first))).status).toBe(
      'FAILED_PRECONDITION',
    );
    expect(
      (await refusal(() => servingOf({ targets: () => ({ unavailable: 'no ready endpoints' }) }, model('1')))).message,
    ).toBe('Deployed model 1 (fraud-1) is unavailable: no ready endpoints.');
    expect(
      (await refusal(() => servingOf({ targets: () => ({ targets: [] }) }, model('1', { backend: undefined })))).status,
    ).toBe('FAILED_PRECONDITION');
  });
});

describe('encode and decode', () => {
  const pool = new JsonWorkerPool(1, 4);
  afterAll(() => pool.close());
  const executor: JsonExecutor = { jsonWorkers: pool, largeBodyBytes: 64 };
  const serving: Serving = {
    model: model('1'),
    targets: [{ origin: 'http://10.0.0.1:8080', basePath: '' }],
    protocol: 'KServeV1',
    modelName: 'fraud',
    predictRoute: undefined,
  };
  const bodyOf = (text: string) => ({
    received: { pieces: [Buffer.from(text)], size: Buffer.byteLength(text) },
    movable: false,
    contentType: 'application/json',
  });
  const small = '{"instances":[[1,2]]}';
  const large = JSON.stringify({ instances: Array.from({ length: 20 }, (_, i) => [i, i]) });

  it('rewrites :predict for the model the same on the event loop and on a worker', async () => {
    const onLoop = await encodeRequest('predict', bodyOf(small), () => serving, executor);
    expect([onLoop.body.toString(), onLoop.instanceCount]).toEqual([small, 1]);
    const onWorker = await encodeRequest('predict', bodyOf(large), () => serving, executor);
    expect([onWorker.body.toString(), onWorker.instanceCount]).toEqual([large, 20]);
  });

  it('refuses a bad body before the model, on either executor', async () => {
    const noModel = (): Serving => {
      throw new GoogleApiError('FAILED_PRECONDITION', 'no traffic');
    };
    for (const text of ['{"instances":', `{"instances":[${'1,'.repeat(40)}1`]) {
      expect((await refusal(() => encodeRequest('predict', bodyOf(text), noModel, executor))).status).toBe(
        'INVALID_ARGUMENT',
      );
    }
    for (const text of [small, large])
      expect((await refusal(() => encodeRequest('predict', bodyOf(text), noModel, executor))).message).toBe(
        'no traffic',
      );
  });

  it(':explain chooses by the deployedModelId in its body; :rawPredict passes its body and type on', async () => {
    const asked: unknown[] = [];
    await encodeRequest(
      'explain',
      bodyOf('{"instances":[1],"deployedModelId":"2"}'),
      (id) => (asked.push(id), serving),
      executor,
    );
    expect(asked).toEqual(['2']);
    const raw = await encodeRequest(
      'rawPredict',
      { ...bodyOf('anything'), contentType: 'text/plain' },
      () => serving,
      executor,
    );
    expect([raw.body.toString(), raw.contentType, raw.instanceCount]).toEqual(['anything', 'text/plain', undefined]);
    expect(
      (
        await refusal(() =>
          encodeRequest('rawPredict', bodyOf(`${'['.repeat(200)}${']'.repeat(200)}`), () => serving, executor),
        )
      ).status,
    ).toBe('INVALID_ARGUMENT');
  });

  it("answers Vertex's form for a 2xx, the error naming the model for another status, and rawPredict unchanged", async () => {
    const request = await encodeRequest('predict', bodyOf(small), () => serving, executor);
    const res = (status: number, text: string) => ({
      status,
      headers: { 'content-type': 'text/x' },
      pieces: [Buffer.from(text)],
      size: Buffer.byteLength(text),
      target: serving.targets[0] as never,
      retried: false,
    });
    const answer = await decodeAnswer('predict', request, res(200, '{"predictions":[0.5]}'), executor);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ predictions: [0.5], deployedModelId: '1' });
    expect(
      (await refusal(() => decodeAnswer('predict', request, res(503, '{"error":"busy"}'), executor))).message,
    ).toBe('Deployed model 1 (fraud-1): the model server at http://10.0.0.1:8080 answered 503: busy');
    const raw = await encodeRequest('rawPredict', bodyOf('x'), () => serving, executor);
    expect(await decodeAnswer('rawPredict', raw, res(418, 'teapot'), executor)).toEqual({
      status: 418,
      contentType: 'text/x',
      body: Buffer.from('teapot'),
    });
  });
});

describe('budget', () => {
  const req = (headers: Record<string, string>) => ({
    client: '10.0.0.9',
    body: { ...receivedBody(Buffer.alloc(0)), weight: (limit: number) => bodyWeight(headers, limit) },
  });
  const principal = { key: 'k', user: { username: 'u', uid: '', groups: [], extra: {} }, accessKey: 'a' };

  it("admits up to the caller's calls in flight, then refuses 429 until one is released", async () => {
    const options = { callers: new CallerLimiter(1, 1_000), bodyLimit: 1_000, largeBodyBytes: 100_000 };
    const release = await takeBudget(options, req({ 'content-length': '10' }), principal);
    expect((await refusal(() => takeBudget(options, req({ 'content-length': '10' }), principal))).httpCode).toBe(429);
    release();
    (await takeBudget(options, req({ 'content-length': '10' }), principal))();
  });
});

describe('the error answerer', () => {
  const lines: unknown[] = [];
  const log = { error: (obj: object) => void lines.push(obj) };
  const context = { log, route: 'predict', requestId: 'r-1', bodyLimit: 1_000 };

  it('answers an unexpected error INTERNAL with the request id only, and reports it once', () => {
    const error = answerFailure(new TypeError('secret detail'), context);
    expect(renderGoogleError(error)).toEqual({
      status: 500,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: '{"error":{"code":500,"message":"Internal error; request id r-1.","status":"INTERNAL"}}',
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      server: 'gateway',
      route: 'predict',
      requestId: 'r-1',
      status: 500,
      cause: 'TypeError',
    });
  });

  it('keeps a Google error as it is, its headers included, and reports no 4xx', () => {
    const err = new GoogleApiError('UNAUTHENTICATED', 'no token');
    err.headers = { 'www-authenticate': 'Bearer realm="x"' };
    expect(renderGoogleError(answerFailure(err, { ...context, log: pino({ level: 'silent' }) })).headers).toEqual({
      'www-authenticate': 'Bearer realm="x"',
      'content-type': 'application/json; charset=UTF-8',
    });
  });

  it("maps fastify's body limit to 413 and its other client errors to their own code", () => {
    expect(
      toGoogleError(
        Object.assign(new Error('too big'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }),
        context,
      ).body().error,
    ).toEqual({
      code: 413,
      status: 'INVALID_ARGUMENT',
      message: 'Request payload size exceeds the limit: 1000 bytes.',
    });
    expect(
      toGoogleError(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), context).httpCode,
    ).toBe(415);
  });
});
