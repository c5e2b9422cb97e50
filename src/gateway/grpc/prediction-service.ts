/**
 * google.cloud.aiplatform.v1.PredictionService over gRPC: Predict, RawPredict and Explain take the prediction
 * pipeline's stages exactly as their REST twins do. The request's `endpoint` becomes the REST path, its metadata
 * the headers (authorization, traceparent, the sticky header). Predict's and Explain's instances and parameters
 * are read from their wire bytes as JSON values (value-wire.ts) in the encode stage, where REST parses its body:
 * the same values a REST body parses to. The answer's values are written back as the response's Values: one
 * conversion each way, and the model server's body is written by the encoder REST uses. RawPredict's HttpBody bytes are the body.
 * A refusal is the status of the same code as the REST answer's.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { create, toBinary, type DescMessage, type DescMethodUnary, type JsonValue } from '@bufbuild/protobuf';
import { ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { REQUEST_ID_HEADER } from '../../http/request-id.js';
import { GoogleApiError } from '../google-errors.js';
import { decodedBody, receivedBody, type CallBody } from '../prediction/call.js';
import type { Answer } from '../prediction/decode.js';
import type { Outcome, PredictionPipeline } from '../prediction/pipeline.js';
import { readJsonRequest, type VertexAnswer } from '../prediction/json.js';
import type { PredictionMethod } from '../prediction/protocols.js';
import { callContextOf, type CallContext } from './context.js';
import { messageFromJson, messageType, PredictionService } from './services.js';
import { errorOfAnswer, toConnectError } from './status.js';
import type { UnaryRoute } from './unary.js';
import { AnswerTooDeepError, valueFromWire, valuesFromWire, valueToWire } from './value-wire.js';
import {
  ExplainRequestWire,
  ExplainResponseWire,
  PredictRequestWire,
  PredictResponseWire,
  servedAs,
} from './wire-messages.js';

const HttpBody = messageType('google.api.HttpBody');
const Explanation = messageType('google.cloud.aiplatform.v1.Explanation');

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

/** Runs one call through the pipeline; resolves to its outcome, or rejects as the RPC ended (deadline, cancel). */
async function runCall(
  pipeline: PredictionPipeline,
  ctx: CallContext,
  call: PredictionMethod,
  endpoint: string,
  body: CallBody,
  contentType: string,
): Promise<Outcome> {
  let outcome: Outcome | undefined;
  const headers: IncomingHttpHeaders = { ...ctx.headers, 'content-type': contentType };
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
      client: ctx.client,
      requestId: ctx.requestId,
      body,
      caller: ctx.caller,
      answerAs: 'values',
    },
    (o) => (outcome = o),
  );
  if (outcome === undefined) throw ConnectError.from(ctx.caller.reason ?? new Error('the call was cancelled'));
  ctx.setHeader(REQUEST_ID_HEADER, outcome.call.requestId);
  if (outcome.call.model !== undefined) ctx.setHeader('x-vertex-ai-deployed-model-id', outcome.call.model.id);
  if (outcome.refusal !== undefined) throw toConnectError(outcome.refusal);
  return outcome;
}

/**
 * The request's instances and parameters as JSON values, at the depths they have in the REST body
 * (`{"instances": [...], "parameters": ...}`), so both transports meet the same nesting limit.
 */
function jsonRequestOf(req: PredictRequestWire | ExplainRequestWire) {
  return () =>
    readJsonRequest({
      instances: valuesFromWire(req.instances, 3, 'instances'),
      parameters: req.parameters.length === 0 ? undefined : valueFromWire(req.parameters, 2, 'parameters'),
      deployedModelId: 'deployedModelId' in req && req.deployedModelId !== '' ? req.deployedModelId : undefined,
    });
}

function sizeOf(req: PredictRequestWire): number {
  let size = req.endpoint.length + req.parameters.length;
  for (const instance of req.instances) size += instance.length;
  return size;
}

/** The answer's values: as the decode stage gave them, or parsed from the text a JSON worker wrote for a large one. */
function valuesOf(answer: Answer): VertexAnswer {
  return answer.values ?? (JSON.parse(answer.body.toString()) as VertexAnswer);
}

/** `values` as Values' bytes, at the REST answer's depth; an answer no gRPC client could decode is the model server's fault. */
function valuesToWire(values: readonly unknown[], outcome: Outcome): Uint8Array[] {
  try {
    return values.map((v) => valueToWire(v, 3));
  } catch (err) {
    if (!(err instanceof AnswerTooDeepError)) throw err;
    const model = outcome.call.model;
    throw toConnectError(
      new GoogleApiError(
        'INTERNAL',
        `Deployed model ${model?.id ?? ''} (${model?.deployedModelName ?? ''}): the model server's answer cannot be sent over gRPC: ${err.message}.`,
        502,
      ),
    );
  }
}

function predictResponse(outcome: Outcome) {
  const values = valuesOf(outcome.answer) as Extract<VertexAnswer, { model: string }>;
  return create(PredictResponseWire, {
    predictions: valuesToWire(values.predictions, outcome),
    deployedModelId: values.deployedModelId,
    model: values.model,
    modelDisplayName: values.modelDisplayName,
    modelVersionId: values.modelVersionId ?? '',
  } as never);
}

function explainResponse(outcome: Outcome) {
  const values = valuesOf(outcome.answer) as Extract<VertexAnswer, { explanations: unknown[] }>;
  return create(ExplainResponseWire, {
    // Explanation is a typed message (attributions, neighbors), not a Value: read from its proto3 JSON.
    explanations: values.explanations.map((e) => toBinary(Explanation, messageFromJson(Explanation, e as JsonValue))),
    deployedModelId: values.deployedModelId,
    predictions: valuesToWire(values.predictions ?? [], outcome),
  } as never);
}

function jsonCall(pipeline: PredictionPipeline, call: 'predict' | 'explain') {
  return async (req: PredictRequestWire | ExplainRequestWire, ctx: CallContext) => {
    const body = decodedBody(sizeOf(req), jsonRequestOf(req));
    const outcome = await runCall(pipeline, ctx, call, req.endpoint, body, 'application/json');
    return call === 'predict' ? predictResponse(outcome) : explainResponse(outcome);
  };
}

interface RawRequest {
  endpoint: string;
  httpBody?: { contentType: string; data: Uint8Array };
}

function rawCall(
  pipeline: PredictionPipeline,
  ctx: CallContext,
  call: 'rawPredict' | 'streamRawPredict',
  req: RawRequest,
) {
  const body = req.httpBody;
  return runCall(
    pipeline,
    ctx,
    call,
    req.endpoint,
    receivedBody(
      body === undefined ? Buffer.alloc(0) : Buffer.from(body.data.buffer, body.data.byteOffset, body.data.byteLength),
    ),
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

/** Predict, Explain and RawPredict: served by Connect (gRPC-Web, compressed calls) and by unary.ts (plain gRPC). */
export function predictionUnaryRoutes(pipeline: PredictionPipeline): UnaryRoute[] {
  return [
    { method: servedAs('Predict', PredictRequestWire, PredictResponseWire), impl: jsonCall(pipeline, 'predict') },
    { method: servedAs('Explain', ExplainRequestWire, ExplainResponseWire), impl: jsonCall(pipeline, 'explain') },
    {
      method: method('RawPredict'),
      impl: async (req: RawRequest, ctx: CallContext) => {
        const outcome = await rawCall(pipeline, ctx, 'rawPredict', req);
        await refuseFailedAnswer(outcome);
        return httpBody(outcome.answer.contentType, outcome.answer.body);
      },
    },
  ];
}

export function predictionServiceRoutes(
  unary: readonly UnaryRoute[],
  pipeline: PredictionPipeline,
): (router: ConnectRouter) => void {
  return (router) => {
    for (const route of unary)
      router.rpc(route.method, ((req: never, ctx: HandlerContext) => route.impl(req, callContextOf(ctx))) as never);
    const stream = PredictionService.methods.find((m) => m.name === 'StreamRawPredict');
    if (stream === undefined) throw new Error('PredictionService has no StreamRawPredict');
    // Each chunk of the model server's answer is one HttpBody message, sent as it arrives.
    router.rpc(
      stream as never,
      async function* (req: RawRequest, ctx: HandlerContext) {
        const outcome = await rawCall(pipeline, callContextOf(ctx), 'streamRawPredict', req);
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
