/**
 * Vertex AI's prediction REST surface (google.cloud.aiplatform.v1.PredictionService over HTTP/JSON):
 *
 *   POST /v1/{endpoint status.name}:predict     {instances, parameters}                  → {predictions, deployedModelId, model, modelDisplayName, modelVersionId}
 *   POST /v1/{endpoint status.name}:explain     {instances, parameters, deployedModelId} → {explanations, deployedModelId, predictions}
 *   POST /v1/{endpoint status.name}:rawPredict  any body, passed unchanged               → the model server's answer, unchanged
 *
 * One pipeline for the three, its order here and nowhere else (../README.md draws it):
 *
 *   admit → authorise → budget → read body → find endpoint → encode (chooses the model) → call upstream → decode → answer
 *
 * Each stage is a function of its own file taking and returning typed values; a stage refuses by
 * throwing a GoogleApiError, which the gateway's one error answerer (../error-answer.ts) renders.
 * Request fields a call does not use are ignored, as Google's front ends do.
 *
 * The pipeline reads a PredictionCall (call.ts) and hands its Outcome to the transport that took the call:
 * REST (rest-transport.ts) writes it as an HTTP answer, gRPC (../grpc/prediction-service.ts) as a message or a
 * status. Neither adds a stage of its own.
 */
import type { Logger } from '../../base/logger.js';
import type { GatewayAuth } from '../auth/gateway-auth.js';
import type { GatewaySettings } from '../settings.js';
import type { CallerLimiter } from '../fairness.js';
import { answerFailure, renderGoogleError, toGoogleError } from '../error-answer.js';
import type { GoogleApiError } from '../google-errors.js';
import type { JsonWorkerPool } from '../json-worker-pool.js';
import type { PredictionMethod } from './protocols.js';
import type { RequestLogger } from '../request-log.js';
import type { ResolvedEndpoint, ResolvedModel, RoutingTable } from '../routing-table.js';
import { GatewayTracing } from '../tracing.js';
import type { TrafficSplitter } from '../traffic-split.js';
import type { UpstreamClient } from '../upstream.js';
import { admitCall, isPredictionMethod, readCallPath } from './admit.js';
import { recordCall, type AnsweredCall } from './answer.js';
import { authorise } from './authorise.js';
import { takeBudget } from './budget.js';
import type { PredictionCall } from './call.js';
import { callUpstream } from './call-upstream.js';
import { chooseModel, findEndpoint, servingOf } from './choose-model.js';
import { decodeAnswer, JSON_CONTENT_TYPE, type Answer } from './decode.js';
import { encodeRequest } from './encode.js';
import { joined } from './read-body.js';

export interface PipelineOptions {
  /** The gateway's settings (../settings.ts), the part the stages read. */
  readonly settings: Pick<GatewaySettings, 'bodyLimitBytes' | 'stickyHeader' | 'largeBodyBytes'>;
  readonly routing: Pick<RoutingTable, 'endpoint' | 'targets'>;
  readonly splitter: TrafficSplitter;
  readonly upstream: UpstreamClient;
  readonly requestLog: RequestLogger;
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
}

/** How a call ended, for the transport to write. */
export interface Outcome {
  readonly answer: Answer;
  /** The refusal the answer renders; undefined when the call was answered by its model (any status for :rawPredict). */
  readonly refusal: GoogleApiError | undefined;
  /** Whether the body was read before the call ended (a refusal before it may close rather than read: rest-transport.ts). */
  readonly bodyRead: boolean;
  readonly call: AnsweredCall;
}

export class PredictionPipeline {
  constructor(private readonly options: PipelineOptions) {}

  get largeBodyBytes(): number {
    return this.options.settings.largeBodyBytes;
  }

  /**
   * Runs one call through every stage and hands its outcome to `deliver` (unless the caller went away), then counts,
   * traces and logs it; never rejects.
   */
  async run(incoming: PredictionCall, deliver: (outcome: Outcome) => void): Promise<void> {
    const { options } = this;
    const { settings } = options;
    const started = performance.now();
    const { requestId, caller } = incoming;
    const trace = options.tracing.startCall(incoming.headers);
    // What is known of the call so far, for its answer, its count and its log line.
    let method: PredictionMethod | undefined;
    let endpoint: ResolvedEndpoint | undefined;
    let model: ResolvedModel | undefined;
    let logged: AnsweredCall['logged'];
    let bodyRead = false;
    let release: (() => void) | undefined;
    let answer: Answer;
    let refusal: GoogleApiError | undefined;
    try {
      const path = readCallPath(incoming.path, options.readNamespace);
      // Counted under its method even when its system parameters are refused.
      if (isPredictionMethod(path.method)) method = path.method;
      const call = admitCall(path);
      const principal = await authorise(options.auth, call, incoming.headers.authorization);
      release = await takeBudget(options, incoming, principal);
      const received = await incoming.body.read(settings.bodyLimitBytes);
      bodyRead = true;
      endpoint = findEndpoint(options.routing, call, options.auth.enabled);
      trace?.describe(call.method, endpoint.namespace, endpoint.name, endpoint.resourceName);
      const contentType = incoming.headers['content-type'];
      if (options.requestLog.sample(endpoint.logging)) logged = { body: joined(received), contentType };
      const found = endpoint;
      const sticky = settings.stickyHeader === undefined ? undefined : incoming.headers[settings.stickyHeader];
      const choose = (explicitId: unknown) => {
        model = chooseModel(found, explicitId, {
          splitter: options.splitter,
          sticky: typeof sticky === 'string' ? sticky : undefined,
        });
        return servingOf(options.routing, model);
      };
      // A body the request log keeps is copied to a worker, not moved.
      const body =
        logged === undefined || received.decode !== undefined
          ? { received, movable: logged === undefined }
          : { received: { pieces: [logged.body], size: logged.body.length }, movable: false };
      const request = await encodeRequest(call.method, { ...body, contentType }, choose, options);
      const headers: Record<string, string> = {};
      if (trace === undefined) GatewayTracing.forward(incoming.headers, headers);
      const upstreamAnswer = await callUpstream(
        options.upstream,
        { endpoint, method: call.method, request, headers, trace },
        caller,
      );
      answer = await decodeAnswer(call.method, request, upstreamAnswer, options, incoming.answerAs);
    } catch (err) {
      const context = {
        log: options.log,
        route: method ?? 'prediction',
        requestId,
        bodyLimit: settings.bodyLimitBytes,
      };
      // A caller that went away is answered nothing, and its call is no server error.
      refusal = caller.gone ? toGoogleError(err, context) : answerFailure(err, context);
      const rendered = renderGoogleError(refusal);
      answer = {
        status: rendered.status,
        contentType: JSON_CONTENT_TYPE,
        body: rendered.body,
        headers: refusal.headers,
      };
    } finally {
      release?.();
    }
    const answered: AnsweredCall = { requestId, method, endpoint, model, logged, trace };
    const cancelled = caller.gone;
    if (!cancelled) deliver({ answer, refusal, bodyRead, call: answered });
    recordCall(
      options.requestLog,
      answered,
      answer,
      cancelled ? 499 : answer.status,
      (performance.now() - started) / 1000,
    );
  }
}
