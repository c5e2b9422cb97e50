/**
 * google.cloud.aiplatform.v1.PredictionService over gRPC: Predict, RawPredict and Explain take the prediction
 * pipeline's stages exactly as their REST twins do. The request message becomes the REST body (proto3 JSON, or
 * a RawPredict's HttpBody bytes), its `endpoint` the REST path, its metadata the headers (authorization,
 * traceparent, the sticky header); the pipeline's outcome becomes the response message or the status of the
 * same code as the REST answer's.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { DescMessage, DescMethodUnary, JsonValue } from '@bufbuild/protobuf';
import { ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { REQUEST_ID_HEADER, requestIdOf } from '../../http/request-id.js';
import { GoogleApiError } from '../google-errors.js';
import { receivedBody } from '../prediction/call.js';
import type { Outcome, PredictionPipeline } from '../prediction/pipeline.js';
import type { PredictionMethod } from '../protocols.js';
import { clientAddressOf } from './context.js';
import { messageFromJson, messageToJson, messageType, PredictionService } from './services.js';
import { errorOfAnswer, toConnectError } from './status.js';

const HttpBody = messageType('google.api.HttpBody');
const PredictResponse = messageType('google.cloud.aiplatform.v1.PredictResponse');
const ExplainResponse = messageType('google.cloud.aiplatform.v1.ExplainResponse');

type Unary = DescMethodUnary<DescMessage, DescMessage>;

function method(name: string): Unary {
  const found = PredictionService.methods.find((m) => m.name === name);
  if (found === undefined || found.methodKind !== 'unary') throw new Error(`PredictionService has no unary ${name}`);
  return found as Unary;
}

/** `projects/{p}/locations/{l}/endpoints/{e}` → its REST path for `call`; each segment encoded, so none can add a method. */
export function restPathOf(endpoint: string, call: PredictionMethod): string {
  const parts = endpoint.split('/');
  if (parts.length !== 6 || parts[0] !== 'projects' || parts[2] !== 'locations' || parts[4] !== 'endpoints')
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `endpoint: invalid value ${JSON.stringify(endpoint.slice(0, 256))}; it must be projects/{project}/locations/{location}/endpoints/{endpoint}`,
    );
  const [, project = '', , location = '', , id = ''] = parts;
  const enc = encodeURIComponent;
  return `/v1/projects/${enc(project)}/locations/${enc(location)}/endpoints/${enc(id)}:${call}`;
}

/** gRPC metadata as the lower-case header record the pipeline reads (binary `-bin` entries are left out). */
export function headersOf(metadata: Headers): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  metadata.forEach((value, name) => {
    if (!name.endsWith('-bin')) headers[name] = value;
  });
  return headers;
}

/** Runs one call through the pipeline; resolves to its outcome, or rejects as the RPC ended (deadline, cancel). */
async function runCall(
  pipeline: PredictionPipeline,
  ctx: HandlerContext,
  call: PredictionMethod,
  endpoint: string,
  body: Buffer,
  contentType: string,
): Promise<Outcome> {
  let outcome: Outcome | undefined;
  const headers: IncomingHttpHeaders = { ...headersOf(ctx.requestHeader), 'content-type': contentType };
  delete headers['content-length'];
  let path: string;
  try {
    path = restPathOf(endpoint, call);
  } catch (err) {
    // Said here too: a streaming method's refusals surface while its answer is read, past the interceptors.
    throw err instanceof GoogleApiError ? toConnectError(err) : err;
  }
  await pipeline.run(
    {
      path,
      headers,
      client: clientAddressOf(ctx),
      requestId: requestIdOf({ headers }),
      body: receivedBody(body),
      signal: ctx.signal,
    },
    (o) => (outcome = o),
  );
  if (outcome === undefined) throw ConnectError.from(ctx.signal.reason ?? new Error('the call was cancelled'));
  ctx.responseHeader.set(REQUEST_ID_HEADER, outcome.call.requestId);
  if (outcome.call.model !== undefined) ctx.responseHeader.set('x-vertex-ai-deployed-model-id', outcome.call.model.id);
  if (outcome.refusal !== undefined) throw toConnectError(outcome.refusal);
  return outcome;
}

function answerJson(outcome: Outcome): JsonValue {
  return JSON.parse(outcome.answer.body.toString()) as JsonValue;
}

function jsonCall(pipeline: PredictionPipeline, call: 'predict' | 'explain', output: DescMessage) {
  return async (req: unknown, ctx: HandlerContext) => {
    const schema = call === 'predict' ? method('Predict').input : method('Explain').input;
    const json = messageToJson(schema, req) as { endpoint?: string };
    const body = Buffer.from(JSON.stringify(json));
    const outcome = await runCall(pipeline, ctx, call, json.endpoint ?? '', body, 'application/json');
    return messageFromJson(output, answerJson(outcome));
  };
}

interface RawRequest {
  endpoint: string;
  httpBody?: { contentType: string; data: Uint8Array };
}

function rawCall(
  pipeline: PredictionPipeline,
  ctx: HandlerContext,
  call: 'rawPredict' | 'streamRawPredict',
  req: RawRequest,
) {
  const body = req.httpBody;
  return runCall(
    pipeline,
    ctx,
    call,
    req.endpoint,
    Buffer.from(body?.data ?? new Uint8Array()),
    body?.contentType || 'application/json',
  );
}

function httpBody(contentType: string, data: Buffer | string) {
  return {
    $typeName: HttpBody.typeName,
    contentType,
    data: typeof data === 'string' ? Buffer.from(data) : data,
    extensions: [],
  };
}

/** :rawPredict passes the model server's answer on whatever its status; gRPC has a status of its own for that. */
async function refuseFailedAnswer(outcome: Outcome): Promise<void> {
  const { answer } = outcome;
  if (answer.status >= 200 && answer.status < 300) return;
  let body = answer.body;
  if (answer.stream !== undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of answer.stream) chunks.push(chunk as Buffer);
    body = Buffer.concat(chunks);
  }
  throw toConnectError(errorOfAnswer(answer.status, body));
}

export function predictionServiceRoutes(pipeline: PredictionPipeline): (router: ConnectRouter) => void {
  return (router) => {
    router.rpc(method('Predict'), jsonCall(pipeline, 'predict', PredictResponse) as never);
    router.rpc(method('Explain'), jsonCall(pipeline, 'explain', ExplainResponse) as never);
    router.rpc(method('RawPredict'), (async (req: RawRequest, ctx: HandlerContext) => {
      const outcome = await rawCall(pipeline, ctx, 'rawPredict', req);
      await refuseFailedAnswer(outcome);
      return httpBody(outcome.answer.contentType, outcome.answer.body);
    }) as never);
    const stream = PredictionService.methods.find((m) => m.name === 'StreamRawPredict');
    if (stream === undefined) throw new Error('PredictionService has no StreamRawPredict');
    // Each chunk of the model server's answer is one HttpBody message, sent as it arrives.
    router.rpc(
      stream as never,
      async function* (req: RawRequest, ctx: HandlerContext) {
        const outcome = await rawCall(pipeline, ctx, 'streamRawPredict', req);
        await refuseFailedAnswer(outcome);
        const { answer } = outcome;
        if (answer.stream === undefined) {
          yield httpBody(answer.contentType, answer.body);
          return;
        }
        try {
          for await (const chunk of answer.stream) yield httpBody(answer.contentType, chunk as Buffer);
        } finally {
          answer.stream.destroy();
        }
      } as never,
    );
  };
}
