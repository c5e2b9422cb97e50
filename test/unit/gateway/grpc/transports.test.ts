/**
 * The gRPC codec against the REST path (issue 49): the gateway's prediction pipeline, gRPC handler and REST
 * transport on one loopback TLS port (ALPN h2), in front of a loopback model server that records each body it is
 * sent and answers with a function of it. Every request REST accepts is sent both ways with equal inputs (the gRPC
 * message encoded from the REST body's JSON by Google's own descriptors, as a client encodes it): the model server
 * must receive the same bytes and the caller the same answer. Both transports also name a call by the one request
 * id its port gave it.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, fromBinary, toBinary, type JsonValue } from '@bufbuild/protobuf';
import { ListValueSchema, StructSchema, ValueSchema, type Value } from '@bufbuild/protobuf/wkt';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayAuth } from '../../../../src/gateway/auth/gateway-auth.js';
import { NO_AUTH } from '../../../../src/gateway/auth/settings.js';
import { CallerLimiter } from '../../../../src/gateway/fairness.js';
import { grpcHandler, isGrpcRequest } from '../../../../src/gateway/grpc/handler.js';
import { messageFromJson, messageToJson, messageType } from '../../../../src/gateway/grpc/services.js';
import { JsonWorkerPool } from '../../../../src/gateway/json-worker-pool.js';
import { PredictionPipeline } from '../../../../src/gateway/prediction/pipeline.js';
import { serveRest } from '../../../../src/gateway/prediction/rest-transport.js';
import { RequestLogger } from '../../../../src/gateway/request-log.js';
import type { ResolvedEndpoint, ResolvedModel } from '../../../../src/gateway/routing-table.js';
import { GatewayTracing } from '../../../../src/gateway/tracing.js';
import { TrafficSplitter } from '../../../../src/gateway/traffic-split.js';
import { UpstreamClient } from '../../../../src/gateway/upstream.js';
import { GATEWAY_SERVER_LIMITS } from '../../../../src/http/server-limits.js';
import type { AccessLine } from '../../../../src/http/front-door.js';
import { createServer, type NodeServer } from '../../../../src/http/server.js';
import { testGatewayTls } from '../../../support/gateway-tls.js';

const RESOURCE = 'projects/p/locations/l/endpoints/e';
const SERVICE = '/google.cloud.aiplatform.v1.PredictionService';
const PredictRequest = messageType('google.cloud.aiplatform.v1.PredictRequest');
const PredictResponse = messageType('google.cloud.aiplatform.v1.PredictResponse');
const ExplainRequest = messageType('google.cloud.aiplatform.v1.ExplainRequest');
const ExplainResponse = messageType('google.cloud.aiplatform.v1.ExplainResponse');
const RawPredictRequest = messageType('google.cloud.aiplatform.v1.RawPredictRequest');
const HttpBody = messageType('google.api.HttpBody');

/** The port's access lines, in order. */
const accessLines: AccessLine[] = [];

/** What the model server was sent, per call, in order. */
const received: { path: string; contentType: string | undefined; body: Buffer }[] = [];

/**
 * The model server: KServe V1's routes answer with the instances they got as predictions (and as explanations),
 * so an answer carries every value of its request back; V2's infer route answers one output with the input's data;
 * any other path (:rawPredict's) echoes its body and content type.
 */
function modelAnswer(req: IncomingMessage, body: Buffer): { type: string; body: Buffer | string } {
  const echo = { type: req.headers['content-type'] ?? 'application/octet-stream', body };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString());
  } catch {
    return echo;
  }
  const { instances, inputs } = (parsed ?? {}) as { instances?: unknown; inputs?: { name: string }[] };
  if (req.url?.endsWith(':explain') === true && Array.isArray(instances)) {
    const explanations = instances.map((_, i) => ({ attributions: [{ outputIndex: [i], outputName: 'out' }] }));
    return { type: 'application/json', body: JSON.stringify({ explanations, predictions: instances }) };
  }
  if (req.url?.endsWith(':predict') === true && Array.isArray(instances))
    return { type: 'application/json', body: JSON.stringify({ predictions: instances }) };
  if (req.url?.endsWith('/infer') === true && Array.isArray(inputs))
    return { type: 'application/json', body: JSON.stringify({ outputs: [{ ...inputs[0], name: 'out' }] }) };
  return echo;
}

let modelServer: Server;
let gateway: NodeServer;
let pipeline: PredictionPipeline;
let upstream: UpstreamClient;
let workers: JsonWorkerPool;
let session: ClientHttp2Session;

function model(id: string, protocol: 'KServeV1' | 'OpenInferenceV2', origin: string): ResolvedModel {
  return {
    id,
    namespace: 'ns',
    deployedModelName: `m-${id}`,
    model: `projects/p/locations/l/models/m${id}`,
    modelVersionId: id === '2' ? '3' : undefined,
    modelDisplayName: `model ${id}`,
    backend: { protocol, modelName: 'm', url: origin } as never,
    unusable: undefined,
  };
}

beforeAll(async () => {
  modelServer = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body });
      const answer = modelAnswer(req, body);
      res.writeHead(200, { 'content-type': answer.type }).end(answer.body);
    });
  });
  modelServer.listen(0, '127.0.0.1');
  await once(modelServer, 'listening');
  const origin = `http://127.0.0.1:${(modelServer.address() as AddressInfo).port}`;
  // Model 1 (KServe V1) takes the whole split; model 2 (Open Inference V2) is reached by :explain's deployedModelId
  // and by the V2 endpoint `v2`.
  const models = new Map([
    ['1', model('1', 'KServeV1', origin)],
    ['2', model('2', 'OpenInferenceV2', origin)],
  ]);
  const endpoint = (name: string, split: string): ResolvedEndpoint => ({
    namespace: 'ns',
    name,
    resourceName: `projects/p/locations/l/endpoints/${name}`,
    endpointId: name,
    split: [[split, 100]],
    signature: split,
    models,
    logging: { enabled: false, samplingRate: 0 },
  });
  const endpoints = new Map([
    [RESOURCE, endpoint('e', '1')],
    ['projects/p/locations/l/endpoints/v2', endpoint('v2', '2')],
  ]);
  const log = pino({ level: 'silent' });
  upstream = new UpstreamClient({ timeoutMs: 10_000 });
  workers = new JsonWorkerPool(1);
  pipeline = new PredictionPipeline({
    routing: {
      endpoint: (name) => endpoints.get(name),
      targets: (m) => ({ targets: [{ origin: (m.backend as { url: string }).url, basePath: '' }] }),
    },
    splitter: new TrafficSplitter(),
    upstream,
    requestLog: new RequestLogger(log, { payloadLimitBytes: 0, maxRecordsPerSecond: 0 }),
    tracing: new GatewayTracing(),
    auth: GatewayAuth.create(undefined as never, NO_AUTH, log),
    readNamespace: () => undefined,
    log,
    callers: new CallerLimiter(1000, 64 * 1024 * 1024),
    jsonWorkers: workers,
    settings: { bodyLimitBytes: 1_500_000, stickyHeader: undefined, largeBodyBytes: 256 * 1024 },
  });
  const grpc = grpcHandler({
    predictions: pipeline,
    bodyLimit: 1_500_000,
    reads: { endpoints: undefined as never, registry: undefined as never },
    api: [],
    log,
  });
  const tls = await testGatewayTls();
  gateway = createServer({
    limits: GATEWAY_SERVER_LIMITS,
    tls: { cert: tls.cert, key: tls.key },
    front: {
      refuse: (_req, res, refusal) => res.writeHead(refusal.status).end(),
      log: (line) => void accessLines.push(line),
    },
    onRequest: (req, res) => (isGrpcRequest(req) ? grpc(req, res) : void serveRest(pipeline, req, res)),
  });
  gateway.listen(0, '127.0.0.1');
  await once(gateway, 'listening');
  session = connect(`https://127.0.0.1:${(gateway.address() as AddressInfo).port}`, { ca: tls.ca });
});

afterAll(async () => {
  session?.close();
  gateway?.close();
  modelServer?.close();
  await upstream?.close();
  await workers?.close();
});

interface Exchange {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: Buffer;
  readonly trailers: Record<string, unknown>;
}

function exchange(headers: Record<string, string>, body: Uint8Array): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ...headers });
    const chunks: Buffer[] = [];
    let head: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    stream.on('response', (h) => (head = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () =>
      resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(chunks), trailers }),
    );
    stream.on('error', reject);
    stream.end(body);
  });
}

function rest(method: string, body: Uint8Array, contentType = 'application/json', endpoint = RESOURCE) {
  return exchange({ ':path': `/v1/${endpoint}:${method}`, 'content-type': contentType }, body);
}

/** A unary gRPC call: its response message's bytes, or its status. */
async function grpc(method: string, message: Uint8Array): Promise<{ code: number; message: string; bytes: Buffer }> {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const answer = await exchange(
    { ':path': `${SERVICE}/${method}`, 'content-type': 'application/grpc', te: 'trailers' },
    frame,
  );
  // In trailers, failures too: a status in headers that do not end the stream is no status to gRPC's clients.
  const status = answer.trailers['grpc-status'];
  const text = answer.trailers['grpc-message'];
  return {
    code: Number(status),
    message: decodeURIComponent(String(text ?? '')),
    bytes: answer.body.subarray(5),
  };
}

/** JSON values as they come back from JSON text (−0 is 0): what a REST caller reads. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** Strings of any Unicode text (JSON escapes and protobuf UTF-8 carry the same well-formed text). */
const json = fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' });
const limits = fc.constantFrom(
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  Number.MAX_SAFE_INTEGER + 2,
  -0,
  0.1,
  1e21,
);
const value = fc.oneof(json, limits, fc.array(fc.oneof(limits, json), { maxLength: 3 }));
const request = fc.record(
  { instances: fc.array(value, { minLength: 1, maxLength: 4 }), parameters: value },
  { requiredKeys: ['instances'] },
);

/** The last body the model server was sent. */
function lastReceived() {
  const last = received.at(-1);
  if (last === undefined) throw new Error('the model server was sent nothing');
  return last;
}

describe('gRPC Predict and Explain against REST :predict and :explain', () => {
  it('send the model server the same body and answer the same, for every request REST accepts', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (body) => {
        const text = JSON.stringify(body);
        const byRest = await rest('predict', Buffer.from(text));
        expect(byRest.status, byRest.body.toString()).toBe(200);
        const restSent = lastReceived().body.toString();
        const message = messageFromJson(PredictRequest, { endpoint: RESOURCE, ...(JSON.parse(text) as object) });
        const byGrpc = await grpc('Predict', toBinary(PredictRequest, message));
        expect([byGrpc.code, byGrpc.message]).toEqual([0, '']);
        expect(lastReceived().body.toString()).toBe(restSent);
        const answer = messageToJson(PredictResponse, fromBinary(PredictResponse, byGrpc.bytes));
        expect(asJson(answer)).toEqual(JSON.parse(byRest.body.toString()));
      }),
      { numRuns: 60 },
    );
  }, 30_000);

  it('explain the same way, the deployedModelId choosing an Open Inference V2 model included', async () => {
    const tensor = fc.array(
      fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 2, maxLength: 2 }),
      {
        minLength: 1,
        maxLength: 3,
      },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(request, fc.record({ instances: tensor, deployedModelId: fc.constant('2') })),
        async (body) => {
          const text = JSON.stringify(body);
          const byRest = await rest('explain', Buffer.from(text));
          const restSent = received.length > 0 ? lastReceived().body.toString() : '';
          const message = messageFromJson(ExplainRequest, { endpoint: RESOURCE, ...(JSON.parse(text) as object) });
          const byGrpc = await grpc('Explain', toBinary(ExplainRequest, message));
          if (byRest.status !== 200) {
            // V2 answers :explain with no "explanation" output here: the same refusal both ways.
            const restError = (JSON.parse(byRest.body.toString()) as { error: { message: string } }).error;
            expect(byGrpc.message).toBe(restError.message);
            return;
          }
          expect(byGrpc.code).toBe(0);
          expect(lastReceived().body.toString()).toBe(restSent);
          // An Explanation is a typed message: the REST answer is compared as that message reads it.
          const answer = messageToJson(ExplainResponse, fromBinary(ExplainResponse, byGrpc.bytes));
          const restAnswer = messageFromJson(ExplainResponse, JSON.parse(byRest.body.toString()) as JsonValue);
          expect(asJson(answer)).toEqual(asJson(messageToJson(ExplainResponse, restAnswer)));
        },
      ),
      { numRuns: 30 },
    );
  }, 30_000);

  it('map V2 tensors the same way', async () => {
    const row = fc.array(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })), {
      minLength: 3,
      maxLength: 3,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 4 }), async (instances) => {
        const text = JSON.stringify({ instances });
        const byRest = await rest(
          'predict',
          Buffer.from(text),
          'application/json',
          'projects/p/locations/l/endpoints/v2',
        );
        expect(byRest.status, byRest.body.toString()).toBe(200);
        const restSent = lastReceived().body.toString();
        const message = messageFromJson(PredictRequest, { endpoint: 'projects/p/locations/l/endpoints/v2', instances });
        const byGrpc = await grpc('Predict', toBinary(PredictRequest, message));
        expect(byGrpc.code).toBe(0);
        expect(lastReceived().body.toString()).toBe(restSent);
        const answer = messageToJson(PredictResponse, fromBinary(PredictResponse, byGrpc.bytes));
        expect(asJson(answer)).toEqual(JSON.parse(byRest.body.toString()));
      }),
      { numRuns: 30 },
    );
  }, 30_000);

  it('accept and refuse the same nesting: 100 levels in the REST body pass, 101 are INVALID_ARGUMENT', async () => {
    const nested = (levels: number): JsonValue => {
      let v: JsonValue = 1;
      for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
      return v;
    };
    // Built message by message: protobuf-es's JSON reader stops at 100 messages deep (a Struct level is 3).
    const asValue = (v: JsonValue): Value =>
      create(ValueSchema, {
        kind: Array.isArray(v)
          ? { case: 'listValue', value: create(ListValueSchema, { values: v.map(asValue) }) }
          : typeof v === 'object' && v !== null
            ? {
                case: 'structValue',
                value: create(StructSchema, {
                  fields: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asValue(x)])),
                }),
              }
            : { case: 'numberValue', value: Number(v) },
      });
    // `{"instances": [X]}`: X's own nesting plus 2.
    for (const [levels, ok] of [
      [98, true],
      [99, false],
    ] as const) {
      const text = JSON.stringify({ instances: [nested(levels)] });
      const byRest = await rest('predict', Buffer.from(text));
      const message = create(PredictRequest, { endpoint: RESOURCE, instances: [asValue(nested(levels))] } as never);
      const byGrpc = await grpc('Predict', toBinary(PredictRequest, message));
      expect([byRest.status, byGrpc.code]).toEqual(ok ? [200, 0] : [400, 3]);
      if (!ok)
        expect(byGrpc.message).toMatch(
          /^Invalid payload received\. instances\[0\]\[0\]\.k[^:]*: the value is nested more than 100 levels deep \(at level 101\)/,
        );
    }
  });

  it('refuse in the same order: an unknown endpoint is NOT_FOUND before an empty instances list is looked at', async () => {
    const missing = 'projects/p/locations/l/endpoints/missing';
    const byRest = await rest('predict', Buffer.from('{"instances":[]}'), 'application/json', missing);
    const byGrpc = await grpc(
      'Predict',
      toBinary(PredictRequest, create(PredictRequest, { endpoint: missing } as never)),
    );
    expect([byRest.status, byGrpc.code]).toEqual([404, 5]);
    const empty = await grpc(
      'Predict',
      toBinary(PredictRequest, create(PredictRequest, { endpoint: RESOURCE } as never)),
    );
    expect([empty.code, empty.message]).toEqual([3, 'instances must hold at least one instance.']);
  });

  it('refuse a number JSON cannot carry, naming where it is', async () => {
    const infinite = create(ValueSchema, { kind: { case: 'numberValue', value: Infinity } });
    const list = create(ListValueSchema, {
      values: [create(ValueSchema, { kind: { case: 'numberValue', value: 1 } }), infinite],
    });
    const instance = create(StructSchema, {
      fields: { a: create(ValueSchema, { kind: { case: 'listValue', value: list } }) },
    });
    const message = create(PredictRequest, {
      endpoint: RESOURCE,
      instances: [create(ValueSchema, { kind: { case: 'structValue', value: instance } })],
    } as never);
    const byGrpc = await grpc('Predict', toBinary(PredictRequest, message));
    expect([byGrpc.code, byGrpc.message]).toEqual([
      3,
      'Invalid payload received. instances[0].a[1]: Infinity is not a number JSON can carry; send a finite number of at most ±1.7976931348623157e308',
    ]);
  });
});

describe('gRPC RawPredict against REST :rawPredict', () => {
  it('pass the same bytes and content type on, and answer the same bytes', async () => {
    const raw = fc.oneof(
      fc.record({ type: fc.constant('application/octet-stream'), data: fc.uint8Array({ maxLength: 64 }) }),
      fc.record({
        type: fc.constant('application/json'),
        data: json.map((v) => new TextEncoder().encode(JSON.stringify(v))),
      }),
    );
    await fc.assert(
      fc.asyncProperty(raw, async ({ type, data }) => {
        const byRest = await rest('rawPredict', data, type);
        expect(byRest.status).toBe(200);
        const restSent = lastReceived();
        const message = messageFromJson(RawPredictRequest, {
          endpoint: RESOURCE,
          httpBody: { contentType: type, data: Buffer.from(data).toString('base64') },
        });
        const byGrpc = await grpc('RawPredict', toBinary(RawPredictRequest, message));
        expect(byGrpc.code).toBe(0);
        expect([lastReceived().contentType, lastReceived().body]).toEqual([restSent.contentType, restSent.body]);
        const answer = fromBinary(HttpBody, byGrpc.bytes) as unknown as { contentType: string; data: Uint8Array };
        expect([answer.contentType, Buffer.from(answer.data)]).toEqual([byRest.headers['content-type'], byRest.body]);
      }),
      { numRuns: 40 },
    );
  }, 30_000);
});

describe('one request id per call, whichever transport serves it', () => {
  const predict = () => {
    const message = toBinary(PredictRequest, messageFromJson(PredictRequest, { endpoint: RESOURCE, instances: [1] }));
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    return frame;
  };
  /** The answer's x-request-id and the access line the port wrote for the call. */
  async function idsOf(contentType: string, callerId?: string) {
    const before = accessLines.length;
    const answer = await exchange(
      {
        ':path': `${SERVICE}/Predict`,
        'content-type': contentType,
        te: 'trailers',
        ...(callerId === undefined ? {} : { 'x-request-id': callerId }),
      },
      predict(),
    );
    expect(answer.status).toBe(200);
    await vi.waitFor(() => expect(accessLines.length).toBe(before + 1));
    return { answered: answer.headers['x-request-id'], logged: accessLines.at(-1)?.requestId };
  }

  // gRPC is served by the unary transport (unary.ts), gRPC-Web by Connect's router: each made an id of its own.
  it.each(['application/grpc', 'application/grpc-web+proto'])(
    "answers %s with the id its access line names, a new one or the caller's",
    async (contentType) => {
      const made = await idsOf(contentType);
      expect(made.answered).toMatch(/^[0-9a-f-]{36}$/);
      expect(made.logged).toBe(made.answered);
      expect(await idsOf(contentType, 'caller-chosen.7')).toEqual({
        answered: 'caller-chosen.7',
        logged: 'caller-chosen.7',
      });
    },
  );
});
