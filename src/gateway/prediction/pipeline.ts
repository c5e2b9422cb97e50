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
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOf } from '../../http/request-id.js';
import { closesRatherThanReads, closeWithoutReading } from '../../http/unread-body.js';
import type { Logger } from '../../runtime/logger.js';
import type { GatewayAuth } from '../auth/gateway-auth.js';
import type { CallerLimiter } from '../fairness.js';
import { answerFailure, renderGoogleError, toGoogleError } from '../error-answer.js';
import type { JsonWorkerPool } from '../json-worker-pool.js';
import { gatewayInFlight } from '../metrics.js';
import type { PredictionMethod } from '../protocols.js';
import type { RequestLogger } from '../request-log.js';
import type { ResolvedEndpoint, ResolvedModel, RoutingTable } from '../routing-table.js';
import { GatewayTracing } from '../tracing.js';
import type { TrafficSplitter } from '../traffic-split.js';
import type { UpstreamClient } from '../upstream.js';
import { admitCall, isPredictionMethod, readCallPath } from './admit.js';
import { recordCall, writeAnswer, type AnsweredCall } from './answer.js';
import { authorise } from './authorise.js';
import { takeBudget } from './budget.js';
import { callUpstream } from './call-upstream.js';
import { chooseModel, findEndpoint, servingOf } from './choose-model.js';
import { decodeAnswer, JSON_CONTENT_TYPE, type Answer } from './decode.js';
import { encodeRequest } from './encode.js';
import { joined, readBody } from './read-body.js';

export interface PipelineOptions {
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

export class PredictionPipeline {
  constructor(private readonly options: PipelineOptions) {}

  /**
   * Serves one request whose path isPredictionRequest matched; never rejects. `awaitingContinue`: the
   * client sent `Expect: 100-continue` (server.ts); `100 Continue` is sent only once the call is
   * admitted, so a refused client never sends its body (RFC 9110 §10.1.1).
   */
  async serve(req: IncomingMessage, res: ServerResponse, awaitingContinue = false): Promise<void> {
    const { options } = this;
    const started = performance.now();
    gatewayInFlight.inc();
    const cancelled = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) cancelled.abort();
    };
    res.once('close', onClose);
    const requestId = requestIdOf(req);
    const trace = options.tracing.startCall(req.headers);
    // What is known of the call so far, for its answer, its count and its log line.
    let method: PredictionMethod | undefined;
    let endpoint: ResolvedEndpoint | undefined;
    let model: ResolvedModel | undefined;
    let logged: AnsweredCall['logged'];
    let bodyRead = false;
    let release: (() => void) | undefined;
    let answer: Answer;
    try {
      const path = readCallPath(req.url ?? '', options.readNamespace);
      // Counted under its method even when its system parameters are refused.
      if (isPredictionMethod(path.method)) method = path.method;
      const call = admitCall(path);
      const principal = await authorise(options.auth, call, req.headers.authorization);
      release = await takeBudget(options, req, principal, awaitingContinue);
      if (awaitingContinue) {
        res.writeContinue();
        awaitingContinue = false;
      }
      const received = await readBody(req, options.bodyLimit);
      bodyRead = true;
      endpoint = findEndpoint(options.routing, call, options.auth.enabled);
      trace?.describe(call.method, endpoint.namespace, endpoint.name, endpoint.resourceName);
      if (options.requestLog.sample(endpoint.logging))
        logged = { body: joined(received), contentType: req.headers['content-type'] };
      const found = endpoint;
      const sticky = options.stickyHeader === undefined ? undefined : req.headers[options.stickyHeader];
      const choose = (explicitId: unknown) => {
        model = chooseModel(found, explicitId, {
          splitter: options.splitter,
          sticky: typeof sticky === 'string' ? sticky : undefined,
        });
        return servingOf(options.routing, model);
      };
      // A body the request log keeps is copied to a worker, not moved.
      const body =
        logged === undefined
          ? { received, movable: true }
          : { received: { pieces: [logged.body], size: logged.body.length }, movable: false };
      const request = await encodeRequest(
        call.method,
        { ...body, contentType: req.headers['content-type'] },
        choose,
        options,
      );
      const headers: Record<string, string> = {};
      if (trace === undefined) GatewayTracing.forward(req.headers, headers);
      const upstreamAnswer = await callUpstream(
        options.upstream,
        { endpoint, method: call.method, request, headers, trace },
        cancelled.signal,
      );
      answer = await decodeAnswer(call.method, request, upstreamAnswer, options);
    } catch (err) {
      answer = this.refusal(req, res, err, {
        requestId,
        method,
        bodyRead,
        awaitingContinue,
        cancelled: cancelled.signal.aborted,
      });
    } finally {
      release?.();
      res.off('close', onClose);
      gatewayInFlight.dec();
    }
    const answered: AnsweredCall = { requestId, method, endpoint, model, logged, trace };
    if (!cancelled.signal.aborted) writeAnswer(res, answer, answered);
    recordCall(
      options.requestLog,
      answered,
      answer,
      cancelled.signal.aborted ? 499 : answer.status,
      (performance.now() - started) / 1000,
    );
  }

  /** The error's answer; a refusal made before the body was read closes the connection rather than read a large body. */
  private refusal(
    req: IncomingMessage,
    res: ServerResponse,
    err: unknown,
    call: {
      requestId: string;
      method: PredictionMethod | undefined;
      bodyRead: boolean;
      awaitingContinue: boolean;
      cancelled: boolean;
    },
  ): Answer {
    const { options } = this;
    const context = {
      log: options.log,
      route: call.method ?? 'prediction',
      requestId: call.requestId,
      bodyLimit: options.bodyLimit,
    };
    // A caller that went away is answered nothing, and its call is no server error.
    const rendered = renderGoogleError(call.cancelled ? toGoogleError(err, context) : answerFailure(err, context));
    if (!call.cancelled) {
      if (
        !call.bodyRead &&
        closesRatherThanReads(
          { headers: req.headers, complete: req.complete, awaitingContinue: call.awaitingContinue },
          options.largeBodyBytes,
        )
      )
        closeWithoutReading(req, res);
      else if (rendered.status === 413) res.setHeader('connection', 'close');
      for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
    }
    return { status: rendered.status, contentType: JSON_CONTENT_TYPE, body: rendered.body };
  }
}
