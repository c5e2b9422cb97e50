/**
 * Vertex AI's prediction REST surface (google.cloud.aiplatform.v1.PredictionService over HTTP/JSON):
 *
 *   POST /v1/{endpoint status.name}:predict     {instances, parameters}                  → {predictions, deployedModelId, model, modelDisplayName, modelVersionId}
 *   POST /v1/{endpoint status.name}:explain     {instances, parameters, deployedModelId} → {explanations, deployedModelId, predictions}
 *   POST /v1/{endpoint status.name}:rawPredict  any body, passed unchanged               → the model server's answer, unchanged
 *
 * Every answer names the deployed model that served it in `X-Vertex-AI-Deployed-Model-Id` (and the
 * endpoint in `X-Vertex-AI-Endpoint-Id`), as Vertex does for rawPredict. Errors are Google JSON errors
 * (google-errors.ts). Request fields a call does not use are ignored, as Google's front ends do.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkSystemParameters, GoogleApiError, sendGoogleError } from './google-errors.js';
import { gatewayInFlight, gatewayRequestDuration, gatewayRequests, gatewayUpstreamDuration, gatewayUpstreamRetries } from './metrics.js';
import { readExplanations, readPredictions, upstreamBody, upstreamPath, UpstreamAnswerError, type PredictionMethod } from './protocols.js';
import type { RequestLogger } from './request-log.js';
import type { ResolvedEndpoint, ResolvedModel, RoutingTable } from './routing-table.js';
import { TensorMappingError } from './tensors.js';
import type { TrafficSplitter } from './traffic-split.js';
import { UpstreamFailure, type UpstreamClient, type UpstreamResponse } from './upstream.js';

export const DEPLOYED_MODEL_HEADER = 'x-vertex-ai-deployed-model-id';
export const ENDPOINT_HEADER = 'x-vertex-ai-endpoint-id';

export interface PredictionRouteOptions {
  readonly routing: RoutingTable;
  readonly splitter: TrafficSplitter;
  readonly upstream: UpstreamClient;
  readonly requestLog: RequestLogger;
  /** Lower-case header name whose value pins a caller to one deployed model; `undefined` = off. */
  readonly stickyHeader: string | undefined;
  readonly bodyLimit: number;
}

const METHODS: ReadonlySet<string> = new Set(['predict', 'explain', 'rawPredict']);

interface Call {
  endpoint: ResolvedEndpoint | undefined;
  method: string;
  model: ResolvedModel | undefined;
  code: number;
  responseBody: Buffer | string | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON request of :predict / :explain, checked as Vertex checks it. */
function parseJsonRequest(body: Buffer): { instances: unknown[]; parameters: unknown; deployedModelId: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new GoogleApiError('INVALID_ARGUMENT', `Invalid JSON payload received. ${(err as Error).message}`);
  }
  if (!isObject(parsed)) throw new GoogleApiError('INVALID_ARGUMENT', 'Invalid JSON payload received. The request must be a JSON object with an "instances" list.');
  if (!('instances' in parsed)) throw new GoogleApiError('INVALID_ARGUMENT', 'instances is required: a list of one or more instances to predict on.');
  if (!Array.isArray(parsed.instances)) throw new GoogleApiError('INVALID_ARGUMENT', `instances must be a list, got ${parsed.instances === null ? 'null' : typeof parsed.instances}.`);
  if (parsed.instances.length === 0) throw new GoogleApiError('INVALID_ARGUMENT', 'instances must hold at least one instance.');
  return { instances: parsed.instances, parameters: parsed.parameters, deployedModelId: parsed.deployedModelId };
}

/** Which deployed model serves this call, or the error that refuses it. */
function chooseModel(options: PredictionRouteOptions, endpoint: ResolvedEndpoint, request: FastifyRequest, explicitId: unknown): ResolvedModel {
  let id: string | undefined;
  if (explicitId !== undefined && explicitId !== '' && explicitId !== null) {
    // :explain's deployedModelId overrides the split (Vertex: "the deployed model to explain").
    id = String(explicitId);
    if (!endpoint.models.has(id)) throw new GoogleApiError('NOT_FOUND', `Deployed model ${id} not found in endpoint ${endpoint.resourceName}.`);
  } else {
    if (endpoint.split.length === 0) {
      throw new GoogleApiError('FAILED_PRECONDITION', `Endpoint ${endpoint.resourceName} accepts no traffic: its traffic split is empty. Set spec.trafficSplit on PredictionEndpoint ${endpoint.namespace}/${endpoint.name}.`);
    }
    const sticky = options.stickyHeader === undefined ? undefined : request.headers[options.stickyHeader];
    id = options.splitter.pick(endpoint.resourceName, endpoint.split, endpoint.signature, typeof sticky === 'string' ? sticky : undefined);
    if (id === undefined) throw new GoogleApiError('FAILED_PRECONDITION', `Endpoint ${endpoint.resourceName} accepts no traffic.`);
  }
  const model = endpoint.models.get(id);
  if (model === undefined) {
    throw new GoogleApiError('UNAVAILABLE', `Deployed model ${id} has traffic in the split of endpoint ${endpoint.resourceName} but is not deployed to it (no DeployedModel with that id).`);
  }
  if (model.unusable !== undefined) {
    const status = model.unusable.includes('does not exist') ? 'UNAVAILABLE' : 'FAILED_PRECONDITION';
    throw new GoogleApiError(status, `Deployed model ${id} cannot be called: ${model.unusable}.`);
  }
  return model;
}

function upstreamMessage(res: UpstreamResponse): string {
  const text = res.body.subarray(0, 512).toString('utf8');
  try {
    const parsed = JSON.parse(res.body.toString('utf8')) as unknown;
    if (isObject(parsed)) {
      const m = parsed.error ?? parsed.message ?? parsed.detail;
      if (typeof m === 'string') return m;
      if (isObject(m) && typeof m.message === 'string') return m.message;
    }
  } catch {
    // not JSON: the text itself
  }
  return text;
}

/** A model server's non-2xx answer to :predict / :explain, as the gateway's error. */
export function answerError(model: ResolvedModel, res: UpstreamResponse): GoogleApiError {
  const prefix = `Deployed model ${model.id} (${model.deployedModelName}): the model server at ${res.target.origin} answered ${res.status}`;
  const detail = upstreamMessage(res);
  const message = `${prefix}${detail !== '' ? `: ${detail}` : ''}`;
  if (res.status === 400 || res.status === 422) return new GoogleApiError('INVALID_ARGUMENT', message, 400);
  if (res.status === 429) return new GoogleApiError('RESOURCE_EXHAUSTED', message);
  if (res.status === 503) return new GoogleApiError('UNAVAILABLE', message);
  if (res.status === 504) return new GoogleApiError('DEADLINE_EXCEEDED', message);
  return new GoogleApiError('INTERNAL', message, 502);
}

export function failureError(model: ResolvedModel, err: UpstreamFailure): GoogleApiError {
  const who = `Deployed model ${model.id} (${model.deployedModelName})`;
  switch (err.kind) {
    case 'connect':
      return new GoogleApiError('UNAVAILABLE', `${who}: no model server endpoint accepted a connection: ${err.message}`);
    case 'timeout':
      return new GoogleApiError('DEADLINE_EXCEEDED', `${who}: ${err.message}`);
    case 'cancelled':
      return new GoogleApiError('CANCELLED', `${who}: ${err.message}`);
    default:
      return new GoogleApiError('INTERNAL', `${who}: the model server connection failed: ${err.message}`, 502);
  }
}

export function registerPredictionRoutes(app: FastifyInstance, options: PredictionRouteOptions): void {
  // Bodies are read as bytes here (rawPredict passes them on unchanged; JSON errors are Google's, not fastify's).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.bodyLimit }, (_req, body, done) => done(null, body));

  app.post('/v1/projects/:project/locations/:location/endpoints/:call', async (request, reply) => {
    const started = performance.now();
    gatewayInFlight.inc();
    const params = request.params as { project: string; location: string; call: string };
    const colon = params.call.lastIndexOf(':');
    const call: Call = { endpoint: undefined, method: colon < 0 ? '' : params.call.slice(colon + 1), model: undefined, code: 200, responseBody: undefined };
    const abort = new AbortController();
    const onClose = (): void => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.once('close', onClose);
    const sampled = { value: false };
    try {
      return await handle(options, request, reply, params, call, abort.signal, sampled);
    } catch (err) {
      const error = err instanceof GoogleApiError ? err : new GoogleApiError('INTERNAL', `Internal error: ${(err as Error).message}`);
      if (!(err instanceof GoogleApiError)) request.log.error({ err }, 'prediction call failed');
      call.code = abort.signal.aborted ? 499 : error.httpCode;
      const body = error.body();
      call.responseBody = JSON.stringify(body);
      if (call.model !== undefined) reply.header(DEPLOYED_MODEL_HEADER, call.model.id);
      return sendGoogleError(reply, error);
    } finally {
      gatewayInFlight.dec();
      reply.raw.off('close', onClose);
      const seconds = (performance.now() - started) / 1000;
      const ns = call.endpoint?.namespace ?? '';
      const ep = call.endpoint?.name ?? '';
      const method = METHODS.has(call.method) ? call.method : 'unknown';
      gatewayRequests.inc({ namespace: ns, endpoint: ep, deployed_model: call.model?.id ?? '', method, code: String(call.code) });
      gatewayRequestDuration.observe({ namespace: ns, endpoint: ep, method }, seconds);
      if (sampled.value && call.endpoint !== undefined) {
        options.requestLog.write({
          namespace: ns, endpoint: ep, resourceName: call.endpoint.resourceName, deployedModelId: call.model?.id, method,
          code: call.code, latencyMs: Math.round(seconds * 1e6) / 1e3, request: request.body as Buffer | undefined, response: call.responseBody,
        });
      }
    }
  });
}

async function handle(
  options: PredictionRouteOptions, request: FastifyRequest, reply: FastifyReply, params: { project: string; location: string; call: string },
  call: Call, signal: AbortSignal, sampled: { value: boolean },
): Promise<FastifyReply> {
  const systemError = checkSystemParameters(request.query);
  if (systemError !== undefined) throw systemError;
  const colon = params.call.lastIndexOf(':');
  const endpointId = colon < 0 ? params.call : params.call.slice(0, colon);
  const resourceName = `projects/${params.project}/locations/${params.location}/endpoints/${endpointId}`;
  if (!METHODS.has(call.method)) {
    throw new GoogleApiError('NOT_FOUND', `Method ${colon < 0 ? '(none)' : JSON.stringify(call.method)} not found for ${resourceName}: the calls are :predict, :explain and :rawPredict.`);
  }
  const method = call.method as PredictionMethod;
  const endpoint = options.routing.endpoint(resourceName);
  if (endpoint === undefined) throw new GoogleApiError('NOT_FOUND', `Endpoint ${resourceName} not found.`);
  call.endpoint = endpoint;
  sampled.value = options.requestLog.sample(endpoint.logging);
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const json = method === 'rawPredict' ? undefined : parseJsonRequest(body);
  const model = chooseModel(options, endpoint, request, method === 'explain' ? json?.deployedModelId : undefined);
  call.model = model;
  const targets = options.routing.targets(model);
  if ('unavailable' in targets) throw new GoogleApiError('UNAVAILABLE', `Deployed model ${model.id} (${model.deployedModelName}) is unavailable: ${targets.unavailable}.`);
  const backend = model.backend;
  if (backend === undefined) throw new GoogleApiError('FAILED_PRECONDITION', `Deployed model ${model.id} has no backend.`);

  let upstreamRequestBody: Buffer | string;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (json === undefined) {
    upstreamRequestBody = body;
    const type = request.headers['content-type'];
    if (typeof type === 'string') headers['content-type'] = type;
  } else {
    try {
      upstreamRequestBody = JSON.stringify(upstreamBody(backend.protocol, json.instances, json.parameters));
    } catch (err) {
      if (err instanceof TensorMappingError) throw new GoogleApiError('INVALID_ARGUMENT', `instances cannot be sent to deployed model ${model.id} as Open Inference V2 tensors: ${err.message}.`);
      throw err;
    }
  }
  const upstreamStarted = performance.now();
  let res: UpstreamResponse;
  try {
    res = await options.upstream.call(`${model.namespace}/${model.deployedModelName}`, targets.targets, { path: upstreamPath(backend.protocol, backend.modelName, method), body: upstreamRequestBody, headers }, signal);
  } catch (err) {
    if (err instanceof UpstreamFailure) throw failureError(model, err);
    throw err;
  } finally {
    gatewayUpstreamDuration.observe({ namespace: endpoint.namespace, endpoint: endpoint.name, deployed_model: model.id }, (performance.now() - upstreamStarted) / 1000);
  }
  if (res.retried) gatewayUpstreamRetries.inc();
  reply.header(DEPLOYED_MODEL_HEADER, model.id).header(ENDPOINT_HEADER, endpoint.endpointId);

  if (json === undefined) {
    const type = res.headers['content-type'];
    call.code = res.status;
    call.responseBody = res.body;
    return reply.code(res.status).header('content-type', typeof type === 'string' ? type : 'application/octet-stream').send(res.body);
  }
  if (res.status < 200 || res.status >= 300) throw answerError(model, res);
  let answer: unknown;
  try {
    answer = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new GoogleApiError('INTERNAL', `Deployed model ${model.id} (${model.deployedModelName}): the model server at ${res.target.origin} answered with invalid JSON.`, 502);
  }
  let out: Record<string, unknown>;
  try {
    if (method === 'predict') {
      out = { predictions: readPredictions(backend.protocol, answer, json.instances.length), deployedModelId: model.id, model: model.model, modelDisplayName: model.modelDisplayName };
      if (model.modelVersionId !== undefined) out.modelVersionId = model.modelVersionId;
    } else {
      const { explanations, predictions } = readExplanations(backend.protocol, answer, json.instances.length);
      out = { explanations, deployedModelId: model.id };
      if (predictions !== undefined) out.predictions = predictions;
    }
  } catch (err) {
    if (err instanceof UpstreamAnswerError) throw new GoogleApiError('INTERNAL', `Deployed model ${model.id} (${model.deployedModelName}): the model server at ${res.target.origin} answered badly: ${err.message}.`, 502);
    throw err;
  }
  const text = JSON.stringify(out);
  call.responseBody = text;
  return reply.header('content-type', 'application/json; charset=UTF-8').send(text);
}
