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
 *
 * Served on node:http directly, ahead of fastify (server.ts routes these paths here): this is the hot
 * path of the data plane, and fastify's request/reply machinery cost as much CPU per call as the
 * gateway's own work (B6). Everything else on the port goes through fastify and its plugins.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller, GatewayAuth } from './auth/gateway-auth.js';
import { predictionTarget } from './auth/targets.js';
import { userTextInMessage } from '../api/common/text.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../http/request-id.js';
import { reportServerError } from '../http/server-errors.js';
import { closesRatherThanReads, closeWithoutReading } from '../http/unread-body.js';
import type { Logger } from '../runtime/logger.js';
import { scanJson } from '../http/json-guard.js';
import { checkSystemParameters, GoogleApiError } from './google-errors.js';
import { gatewayInFlight, gatewayRequestDuration, gatewayRequests, gatewayUpstreamDuration, gatewayUpstreamRetries } from './metrics.js';
import { bodyWeight, fairnessKeyOf, type CallerLimiter } from './fairness.js';
import { answerError, failureError } from './prediction-errors.js';
import { upstreamPath, type PredictionMethod } from './protocols.js';
import type { JsonWorkerPool } from './json-worker-pool.js';
import { parseJsonRequest, serializeUpstreamRequest, vertexAnswer, type JsonRequest, type ServingModel } from './prediction-json.js';
import type { RequestLogger } from './request-log.js';
import type { ResolvedEndpoint, ResolvedModel, RoutingTable, Target } from './routing-table.js';
import type { BackendProtocol } from '../api/prediction/v1/backend.js';
import { GatewayTracing, type CallSpan } from './tracing.js';
import type { TrafficSplitter } from './traffic-split.js';
import { Cancellation, UpstreamFailure, type UpstreamClient, type UpstreamResponse } from './upstream.js';

export const DEPLOYED_MODEL_HEADER = 'x-vertex-ai-deployed-model-id';
export const ENDPOINT_HEADER = 'x-vertex-ai-endpoint-id';

export interface PredictionHandlerOptions {
  readonly routing: RoutingTable;
  readonly splitter: TrafficSplitter;
  readonly upstream: UpstreamClient;
  readonly requestLog: RequestLogger;
  /** Lower-case header name whose value pins a caller to one deployed model; `undefined` = off. */
  readonly stickyHeader: string | undefined;
  readonly bodyLimit: number;
  readonly tracing: GatewayTracing;
  readonly auth: GatewayAuth;
  /** The namespace in a path's project (the --project template read backwards: auth/targets.ts). */
  readonly readNamespace: (project: string) => string | undefined;
  /** Where 5xx answers are reported (server-errors.ts). */
  readonly log: Logger;
  /** Calls in flight per caller (fairness.ts). */
  readonly callers: CallerLimiter;
  /** Where the JSON work of bodies (request or answer) of `largeBodyBytes` and more is done, off the event loop. */
  readonly jsonWorkers: JsonWorkerPool;
  readonly largeBodyBytes: number;
}

/** `/v1/projects/{p}/locations/{l}/endpoints/{id}:{method}[?query]`: the paths this handler serves (any method name). */
const PREDICTION_PATH = /^\/v1\/projects\/([^/?#]+)\/locations\/([^/?#]+)\/endpoints\/([^/?#]+)(?:\?(.*))?$/;

export function isPredictionRequest(req: IncomingMessage): boolean {
  return req.method === 'POST' && PREDICTION_PATH.test(req.url ?? '');
}

const METHODS: ReadonlySet<string> = new Set(['predict', 'explain', 'rawPredict']);

interface Call {
  endpoint: ResolvedEndpoint | undefined;
  method: string;
  model: ResolvedModel | undefined;
  /** Whether the request body has been read to its end. */
  bodyRead: boolean;
  /** The request body, kept for the request log; not kept by a large :predict that is not logged (its bytes went to a JSON worker). */
  body: Buffer | undefined;
  sampled: boolean;
  trace: CallSpan | undefined;
  requestType: string | undefined;
  /** Who is calling, once authenticated (per-caller fairness keys on `caller.key`). */
  caller: Caller | undefined;
  requestId: string;
  release: (() => void) | undefined;
  /** Sends `100 Continue` to a client that waits for it before sending the body (RFC 9110 §10.1.1); unset once sent. */
  continueBody: (() => void) | undefined;
}

/** Where a chosen deployed model is called: its ready targets, and its backend's protocol and model name. */
interface Serving {
  readonly targets: readonly Target[];
  readonly protocol: BackendProtocol;
  readonly modelName: string;
}

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer | string;
}

function decode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** rawPredict forwards its body unchanged, but a JSON one still gets the nesting limit every JSON route has. */
function rawJsonDepth(req: IncomingMessage, body: Buffer): void {
  const type = req.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) return;
  try {
    scanJson(body);
  } catch (err) {
    throw new GoogleApiError('INVALID_ARGUMENT', `Invalid JSON payload received. ${(err as Error).message}`);
  }
}

/** The system parameters of a query string, in the shape checkSystemParameters reads. */
function queryOf(query: string | undefined): Record<string, string[]> | undefined {
  if (query === undefined || query === '') return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(query)) (out[k] ??= []).push(v);
  return out;
}

/** A request body as received: node:http's chunks, each owning its memory. */
interface ReceivedBody {
  readonly pieces: Buffer[];
  readonly size: number;
}

function joined(body: ReceivedBody): Buffer {
  return body.pieces.length === 1 ? (body.pieces[0] as Buffer) : Buffer.concat(body.pieces, body.size);
}

/** The request body, up to `limit` bytes; beyond it a 413 (the connection is then closed, as the rest is unread). */
function readBody(req: IncomingMessage, limit: number): Promise<ReceivedBody> {
  const declared = Number(req.headers['content-length'] ?? 0);
  const tooLarge = (): GoogleApiError => new GoogleApiError('INVALID_ARGUMENT', `Request payload size exceeds the limit: ${limit} bytes.`, 413);
  if (declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ pieces: chunks, size }));
    req.once('error', reject);
  });
}

export class PredictionHandler {
  constructor(private readonly options: PredictionHandlerOptions) {}

  /**
   * Serves one request whose path matched isPredictionRequest. Never throws. `awaitingContinue`: the
   * client sent `Expect: 100-continue` (server.ts's 'checkContinue'); `100 Continue` is then sent only
   * once the call is admitted, so a refused client never sends its body.
   */
  serve(req: IncomingMessage, res: ServerResponse, awaitingContinue = false): void {
    const started = performance.now();
    gatewayInFlight.inc();
    const abort = new Cancellation();
    const onClose = (): void => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);
    const call: Call = {
      endpoint: undefined, method: '', model: undefined, bodyRead: false, body: undefined, sampled: false, trace: this.options.tracing.startCall(req.headers),
      requestType: undefined, caller: undefined, requestId: requestIdOf(req), release: undefined,
      continueBody: awaitingContinue ? () => res.writeContinue() : undefined,
    };
    this.handle(req, call, abort).then(
      (answer) => this.finish(res, call, answer, started, abort, onClose),
      (err: unknown) => {
        // An unexpected error's own text is not the caller's business: the log line with this request id has it.
        const error = err instanceof GoogleApiError ? err : new GoogleApiError('INTERNAL', `Internal error; request id ${call.requestId}.`);
        const answer: Answer = { status: error.httpCode, contentType: 'application/json; charset=UTF-8', body: JSON.stringify(error.body()) };
        const unread = !call.bodyRead && !abort.aborted && closesRatherThanReads({ headers: req.headers, complete: req.complete, awaitingContinue: call.continueBody !== undefined }, this.options.largeBodyBytes);
        if (unread) closeWithoutReading(req, res);
        else if (error.httpCode === 413) res.setHeader('connection', 'close');
        if (error.headers !== undefined) for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
        if (error.httpCode >= 500 && !abort.aborted) reportServerError(this.options.log, { server: 'gateway', route: call.method || 'prediction', requestId: call.requestId, status: error.httpCode, err, cause: err instanceof GoogleApiError ? err.status : undefined });
        this.finish(res, call, answer, started, abort, onClose);
      },
    );
  }

  private finish(res: ServerResponse, call: Call, answer: Answer, started: number, aborted: Cancellation, onClose: () => void): void {
    res.off('close', onClose);
    call.release?.();
    gatewayInFlight.dec();
    const code = aborted.aborted ? 499 : answer.status;
    if (!aborted.aborted) {
      // The flat [name, value, ...] form: node:http writes it as is, without building a header object.
      const headers: (string | number)[] = ['content-type', answer.contentType, 'content-length', Buffer.byteLength(answer.body), REQUEST_ID_HEADER, call.requestId];
      if (call.model !== undefined) headers.push(DEPLOYED_MODEL_HEADER, call.model.id);
      if (call.endpoint !== undefined) headers.push(ENDPOINT_HEADER, call.endpoint.endpointId);
      res.writeHead(answer.status, headers).end(answer.body);
    }
    call.trace?.end(code, call.model?.id);
    const seconds = (performance.now() - started) / 1000;
    const ns = call.endpoint?.namespace ?? '';
    const ep = call.endpoint?.name ?? '';
    const method = METHODS.has(call.method) ? call.method : 'unknown';
    gatewayRequests.inc({ namespace: ns, endpoint: ep, deployed_model: call.model?.id ?? '', method, code: String(code) });
    gatewayRequestDuration.observe({ namespace: ns, endpoint: ep, method }, seconds);
    if (call.sampled && call.endpoint !== undefined) {
      this.options.requestLog.write({
        namespace: ns, endpoint: ep, resourceName: call.endpoint.resourceName, deployedModelId: call.model?.id, method,
        code, latencyMs: Math.round(seconds * 1e6) / 1e3, request: call.body, response: answer.body,
        requestContentType: call.requestType, responseContentType: answer.contentType,
      });
    }
  }

  /** Which deployed model serves this call, or the error that refuses it. */
  private chooseModel(endpoint: ResolvedEndpoint, req: IncomingMessage, explicitId: unknown): ResolvedModel {
    let id: string | undefined;
    if (explicitId !== undefined && explicitId !== '' && explicitId !== null) {
      // :explain's deployedModelId overrides the split (Vertex: "the deployed model to explain").
      id = String(explicitId);
      if (!endpoint.models.has(id)) throw new GoogleApiError('NOT_FOUND', `Deployed model ${userTextInMessage(id)} not found in endpoint ${endpoint.resourceName}.`);
    } else {
      if (endpoint.split.length === 0) {
        throw new GoogleApiError('FAILED_PRECONDITION', `Endpoint ${endpoint.resourceName} accepts no traffic: its traffic split is empty. Set spec.trafficSplit on PredictionEndpoint ${endpoint.namespace}/${endpoint.name}.`);
      }
      const sticky = this.options.stickyHeader === undefined ? undefined : req.headers[this.options.stickyHeader];
      id = this.options.splitter.pick(endpoint.resourceName, endpoint.split, endpoint.signature, typeof sticky === 'string' ? sticky : undefined);
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

  private async handle(req: IncomingMessage, call: Call, signal: Cancellation): Promise<Answer> {
    const match = PREDICTION_PATH.exec(req.url ?? '') as RegExpExecArray;
    const last = decode(match[3] ?? '');
    const colon = last.lastIndexOf(':');
    call.method = colon < 0 ? '' : last.slice(colon + 1);
    const systemError = checkSystemParameters(queryOf(match[4]));
    if (systemError !== undefined) throw systemError;
    const resourceName = `projects/${decode(match[1] ?? '')}/locations/${decode(match[2] ?? '')}/endpoints/${colon < 0 ? last : last.slice(0, colon)}`;
    if (!METHODS.has(call.method)) {
      throw new GoogleApiError('NOT_FOUND', `Method ${colon < 0 ? '(none)' : JSON.stringify(userTextInMessage(call.method))} not found for ${userTextInMessage(resourceName)}: the calls are :predict, :explain and :rawPredict.`);
    }
    const method = call.method as PredictionMethod;
    // Authorised on the object the path names, before the body is read or the endpoint looked up.
    const target = predictionTarget(this.options.readNamespace, decode(match[1] ?? ''), colon < 0 ? last : last.slice(0, colon));
    const notFound = (): GoogleApiError => new GoogleApiError('NOT_FOUND', `Endpoint ${userTextInMessage(resourceName)} not found.`);
    call.caller = this.options.auth.cachedCaller(method, req.headers.authorization, target, req.socket) ?? await this.options.auth.checkNamed(method, req.headers.authorization, target, resourceName, notFound);
    // Counted against its caller before its body is read: one caller's bursts or large bodies cannot take the gateway from the others.
    const fairnessKey = fairnessKeyOf(req, call.caller);
    const admission = this.options.callers.acquire(fairnessKey, bodyWeight(req, this.options.bodyLimit));
    if (typeof admission !== 'function') {
      // A refusal that will close its connection with its body on the way waits for one of the caller's
      // calls to end (fairness.ts holdRefusal). Not one awaiting `100 Continue`: it costs no body, and
      // curl sends the body anyway after waiting 1 s for an answer.
      if (call.continueBody === undefined && closesRatherThanReads({ headers: req.headers, complete: req.complete, awaitingContinue: false }, this.options.largeBodyBytes)) await this.options.callers.holdRefusal(fairnessKey);
      throw admission;
    }
    call.release = admission;
    call.continueBody?.();
    call.continueBody = undefined;
    const received = await readBody(req, this.options.bodyLimit);
    call.bodyRead = true;
    const endpoint = this.options.routing.endpoint(resourceName);
    if (endpoint === undefined || (this.options.auth.enabled && (endpoint.namespace !== target?.namespace || endpoint.name !== target.name))) throw notFound();
    call.endpoint = endpoint;
    call.trace?.describe(method, endpoint.namespace, endpoint.name, endpoint.resourceName);
    call.sampled = this.options.requestLog.sample(endpoint.logging);
    if (call.sampled) call.requestType = req.headers['content-type'];
    const offloaded = method === 'predict' && received.size >= this.options.largeBodyBytes;
    if (offloaded) return this.predictLarge(req, call, received, endpoint, signal);
    const body = joined(received);
    call.body = body;
    if (method === 'rawPredict') rawJsonDepth(req, body);
    const json = method === 'rawPredict' ? undefined : parseJsonRequest(body);
    const model = this.chooseModel(endpoint, req, method === 'explain' ? json?.deployedModelId : undefined);
    call.model = model;
    const targets = this.serving(model);
    const headers = this.upstreamHeaders(req, call);
    let upstreamRequestBody: Buffer | string;
    if (json === undefined) {
      upstreamRequestBody = body;
      const type = req.headers['content-type'];
      if (typeof type === 'string') headers['content-type'] = type;
    } else {
      upstreamRequestBody = serializeUpstreamRequest(targets.protocol, json, model.id);
    }
    return this.exchange(call, endpoint, model, targets, method, upstreamRequestBody, headers, json, signal);
  }

  /** The model's targets and backend protocol, or the error that says why it cannot be called. */
  private serving(model: ResolvedModel): Serving {
    const targets = this.options.routing.targets(model);
    if ('unavailable' in targets) throw new GoogleApiError('UNAVAILABLE', `Deployed model ${model.id} (${model.deployedModelName}) is unavailable: ${targets.unavailable}.`);
    const backend = model.backend;
    if (backend === undefined) throw new GoogleApiError('FAILED_PRECONDITION', `Deployed model ${model.id} has no backend.`);
    return { targets: targets.targets, protocol: backend.protocol, modelName: backend.modelName };
  }

  private upstreamHeaders(req: IncomingMessage, call: Call): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (call.trace === undefined) GatewayTracing.forward(req.headers, headers);
    return headers;
  }

  /**
   * :predict with a large body, its JSON work on a worker thread. The refusals come in the order of
   * the event-loop path: the body's own faults first, then the model's (chosen before, as :predict's
   * choice does not read the body), then the tensor mapping.
   */
  private async predictLarge(req: IncomingMessage, call: Call, received: ReceivedBody, endpoint: ResolvedEndpoint, signal: Cancellation): Promise<Answer> {
    let chosen: { model: ResolvedModel; serving: Serving } | undefined;
    let refusal: unknown;
    try {
      const model = this.chooseModel(endpoint, req, undefined);
      call.model = model;
      chosen = { model, serving: this.serving(model) };
    } catch (err) {
      refusal = err;
    }
    // Moved to the worker, not copied, unless the request log needs the bytes here too.
    if (call.sampled) call.body = joined(received);
    const pieces = call.body === undefined ? received.pieces : [call.body];
    const prepared = await this.options.jsonWorkers.run({ kind: 'request', body: pieces, protocol: chosen?.serving.protocol, modelId: chosen?.model.id ?? '' }, call.body === undefined);
    if (chosen === undefined) throw refusal;
    const headers = this.upstreamHeaders(req, call);
    return this.exchange(call, endpoint, chosen.model, chosen.serving, 'predict', prepared.bytes, headers, { instanceCount: prepared.instanceCount ?? 0 }, signal);
  }

  private async exchange(call: Call, endpoint: ResolvedEndpoint, model: ResolvedModel, serving: Serving, method: PredictionMethod, upstreamRequestBody: Buffer | string, headers: Record<string, string>, json: JsonRequest | { instanceCount: number } | undefined, signal: Cancellation): Promise<Answer> {
    const upstreamStarted = performance.now();
    let res: UpstreamResponse;
    try {
      res = await this.options.upstream.call(`${model.namespace}/${model.deployedModelName}`, serving.targets, { path: upstreamPath(serving.protocol, serving.modelName, method), body: upstreamRequestBody, headers, trace: call.trace }, signal);
    } catch (err) {
      if (err instanceof UpstreamFailure) throw failureError(model, err);
      throw err;
    } finally {
      gatewayUpstreamDuration.observe({ namespace: endpoint.namespace, endpoint: endpoint.name, deployed_model: model.id }, (performance.now() - upstreamStarted) / 1000);
    }
    if (res.retried) gatewayUpstreamRetries.inc();

    if (json === undefined) {
      const type = res.headers['content-type'];
      return { status: res.status, contentType: typeof type === 'string' ? type : 'application/octet-stream', body: res.body };
    }
    if (res.status < 200 || res.status >= 300) throw answerError(model, res);
    const instanceCount = 'instances' in json ? json.instances.length : json.instanceCount;
    const jsonMethod = method === 'explain' ? 'explain' : 'predict';
    const servedBy: ServingModel = { id: model.id, deployedModelName: model.deployedModelName, model: model.model, modelDisplayName: model.modelDisplayName, modelVersionId: model.modelVersionId, origin: res.target.origin };
    // Never joined here: the pieces that are whole socket reads (no byte of them but this answer's) are moved to the worker, the others copied.
    const body = res.size >= this.options.largeBodyBytes
      ? (await this.options.jsonWorkers.run({ kind: 'answer', body: res.pieces, method: jsonMethod, protocol: serving.protocol, instanceCount, model: servedBy }, true)).bytes
      : vertexAnswer(jsonMethod, serving.protocol, res.body, instanceCount, servedBy);
    return { status: 200, contentType: 'application/json; charset=UTF-8', body };
  }
}
