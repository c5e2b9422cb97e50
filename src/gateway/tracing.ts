/**
 * W3C trace context through the gateway (https://www.w3.org/TR/trace-context/, /baggage/): a
 * SERVER span per prediction call continues the caller's `traceparent`/`tracestate` (or starts a
 * trace), and a CLIENT span per model-server attempt (a retry on another endpoint is a second one)
 * carries `traceparent`, `tracestate` and `baggage` on to the model server. Attributes name the
 * endpoint, deployed model, method and HTTP code, never a payload or a credential.
 *
 * Only `@opentelemetry/api` here, and the sampler and id generator that src/runtime/telemetry.ts
 * registers with the SDK (root-sampling.ts: a call that starts a trace is decided before any span is
 * made). Whether an SDK is registered is checked once, when the gateway is built: with tracing off a
 * call creates no span and no context, and the caller's three headers are copied to the model server
 * as they came, so a mesh or a traced model server still sees one trace.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import { rootSampling, tracingEnabled } from '../runtime/telemetry.js';
import type { PresetTraceIds, RootSampling } from '../runtime/root-sampling.js';
import type { Target } from './routing-table.js';

/** Attributes of the gateway's spans beyond the HTTP semantic conventions. */
export const SPAN_ATTRIBUTES = {
  namespace: 'endpoint_operator.namespace',
  endpoint: 'endpoint_operator.endpoint',
  endpointResourceName: 'endpoint_operator.endpoint.resource_name',
  deployedModelId: 'endpoint_operator.deployed_model.id',
  method: 'endpoint_operator.method',
  retry: 'endpoint_operator.upstream.retry',
} as const;

const CONTEXT_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const;

/** One model-server attempt: the headers to send (with this attempt's traceparent) and its end. */
export interface AttemptTrace {
  readonly headers: Record<string, string>;
  end(status: number | undefined, error?: string): void;
}

/** What upstream.ts needs of a traced call: a span per attempt, child of the call's span. */
export interface UpstreamTrace {
  attempt(target: Target, headers: Record<string, string>, retry: boolean): AttemptTrace;
}

/** A traced call, as prediction-handler.ts sees it. */
export interface CallSpan extends UpstreamTrace {
  /** Names the call once the path is parsed (low cardinality: the method, not the endpoint). */
  describe(method: string, namespace: string | undefined, endpoint: string | undefined, resourceName: string | undefined): void;
  end(code: number, deployedModelId: string | undefined): void;
}

const SERVER_SPAN_NAME = 'POST /v1/{endpoint}';
const SERVER_SPAN_ATTRIBUTES: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: 'POST' };

const NO_END = (): void => {};

/** The W3C `traceparent` (version 00) a model server gets: the trace, its parent span, and the sampled flag. */
function traceparentOf(traceId: string, parentId: string, sampled: boolean): string {
  return `00-${traceId}-${parentId}-${sampled ? '01' : '00'}`;
}

/** server.address / server.port of an origin, parsed once per origin (model server endpoints are few). */
const addresses = new Map<string, { host: string; port: number }>();
function addressOf(origin: string): { host: string; port: number } {
  let a = addresses.get(origin);
  if (a === undefined) {
    const url = new URL(origin);
    a = { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
    if (addresses.size >= 10_000) addresses.clear();
    addresses.set(origin, a);
  }
  return a;
}

/** The SERVER span of one prediction call. */
export class CallTrace implements CallSpan {
  private readonly context: Context;
  private readonly recording: boolean;

  /**
   * `startedHere`: the call brought no trace context (`parent` is the root context), so its attempts'
   * `traceparent` is the client span's own context (the call's trace, the span's id, its sampled flag)
   * with nothing else to propagate: written here rather than through the propagators.
   */
  constructor(private readonly tracer: Tracer, private readonly span: Span, parent: Context, private readonly startedHere: boolean) {
    this.context = trace.setSpan(parent, span);
    this.recording = span.isRecording();
  }

  describe(method: string, namespace: string | undefined, endpoint: string | undefined, resourceName: string | undefined): void {
    // Unsampled calls (99 of 100 at the chart's 0.01) skip every span call: no name string built, and
    // the span method call sites only ever see the SDK's recording span (monomorphic in V8).
    if (!this.recording) return;
    this.span.updateName(`POST /v1/{endpoint}:${method}`);
    this.span.setAttribute(SPAN_ATTRIBUTES.method, method);
    if (namespace !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.namespace, namespace);
    if (endpoint !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.endpoint, endpoint);
    if (resourceName !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.endpointResourceName, resourceName);
  }

  attempt(target: Target, headers: Record<string, string>, retry: boolean): AttemptTrace {
    // Not `{ ...headers }`: in V8 11 (Node 20) a spread copy has a map of its own, and a property added to
    // it (the traceparent, just below) makes a new map every time, so each call's headers had a shape
    // never seen before: every load from them (withoutCredentials, undici's header loop) missed its
    // caches, and the maps were garbage. B6 at sampler 0.01 cost ~14 µs more per call for it.
    const sent: Record<string, string> = Object.assign({}, headers);
    if (!this.recording) {
      // A trace not sampled here records nothing: its context (sampled flag off) goes on as it is.
      propagation.inject(this.context, sent);
      return { headers: sent, end: NO_END };
    }
    const address = addressOf(target.origin);
    const span = this.tracer.startSpan('POST', {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: 'POST',
        [ATTR_SERVER_ADDRESS]: address.host,
        [ATTR_SERVER_PORT]: address.port,
        [SPAN_ATTRIBUTES.retry]: retry,
      },
    }, this.context);
    const context = span.spanContext();
    if (this.startedHere && context.traceState === undefined) sent['traceparent'] = traceparentOf(context.traceId, context.spanId, (context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED);
    else propagation.inject(trace.setSpan(this.context, span), sent);
    return {
      headers: sent,
      end(status, error) {
        if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (error !== undefined || (status !== undefined && status >= 500)) {
          span.setAttribute(ATTR_ERROR_TYPE, error ?? String(status));
          span.setStatus({ code: SpanStatusCode.ERROR, ...(error !== undefined ? { message: error } : {}) });
        }
        span.end();
      },
    };
  }

  end(code: number, deployedModelId: string | undefined): void {
    if (!this.recording) return; // a non-recording span's end() does nothing
    if (deployedModelId !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.deployedModelId, deployedModelId);
    this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, code);
    // A server span is an error for 5xx only; 4xx is the caller's (OpenTelemetry HTTP conventions).
    if (code >= 500) {
      this.span.setAttribute(ATTR_ERROR_TYPE, String(code));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

/**
 * A call that starts a trace its sampler did not sample (99 in 100 at the chart's 0.01): nothing is
 * recorded, and each attempt sends the model server a W3C traceparent of the trace (version 00, a
 * fresh parent id, flags 00), as the SDK's non-recording span would have it, so the model server and
 * anything after it see one trace and the decision not to sample it.
 */
class UnsampledRootCall implements CallSpan {
  constructor(private readonly traceId: string, private readonly ids: PresetTraceIds) {}

  describe(): void {}

  attempt(_target: Target, headers: Record<string, string>): AttemptTrace {
    const sent: Record<string, string> = Object.assign({}, headers);
    sent['traceparent'] = traceparentOf(this.traceId, this.ids.generateSpanId(), false);
    return { headers: sent, end: NO_END };
  }

  end(): void {}
}

export class GatewayTracing {
  readonly enabled: boolean;
  private readonly tracer: Tracer;
  private readonly sampling: RootSampling | undefined;

  constructor() {
    this.enabled = tracingEnabled();
    this.tracer = trace.getTracer('endpoint-operator-gateway');
    this.sampling = rootSampling();
  }

  /** The call's span, continuing the caller's trace context; `undefined` with tracing off. */
  startCall(headers: IncomingHttpHeaders): CallSpan | undefined {
    if (!this.enabled) return undefined;
    const startedHere = headers.traceparent === undefined && headers.baggage === undefined;
    if (this.sampling !== undefined && startedHere) {
      // A call that starts a trace is decided on a fresh trace id before any span or context is made
      // (root-sampling.ts). Through the SDK's tracer, an unsampled call's span, context and propagator
      // calls took ~11 µs of the gateway's CPU per call (perf, B6 tracing at sampler 0.01); asking the SDK's
      // sampler about an id hex-encoded per call still took ~4 (perf: 60 samples in 15,000 calls), the
      // decision on the id's bytes ~0.7, against a goal of 5 for all of tracing.
      const root = this.sampling.newTrace();
      if (!root.sampled) return new UnsampledRootCall(root.traceId, this.sampling.ids);
      // Sampled: the SDK's tracer starts the trace with this id and gets this decision back from its sampler.
    }
    // With neither header the propagators would find nothing (a tracestate alone is ignored, W3C 3.3).
    const parent = startedHere ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, headers);
    const span = this.tracer.startSpan(SERVER_SPAN_NAME, { kind: SpanKind.SERVER, attributes: SERVER_SPAN_ATTRIBUTES }, parent);
    this.sampling?.ids.presetNextTraceId(undefined);
    return new CallTrace(this.tracer, span, parent, startedHere);
  }

  /** With tracing off: the caller's trace context headers, copied to the model server's request as they came. */
  static forward(from: IncomingHttpHeaders, to: Record<string, string>): void {
    for (const name of CONTEXT_HEADERS) {
      const value = from[name];
      if (typeof value === 'string') to[name] = value;
    }
  }
}
