/**
 * W3C trace context through the gateway (https://www.w3.org/TR/trace-context/, /baggage/): a
 * SERVER span per prediction call continues the caller's `traceparent`/`tracestate` (or starts a
 * trace), and a CLIENT span per model-server attempt (a retry on another endpoint is a second one)
 * carries `traceparent`, `tracestate` and `baggage` on to the model server. Attributes name the
 * endpoint, deployed model, method and HTTP code, never a payload or a credential.
 *
 * Only `@opentelemetry/api` here; the SDK (sampler, exporter) is src/runtime/telemetry.ts's. Whether
 * an SDK is registered is checked once, when the gateway is built: with tracing off a call creates no
 * span and no context, and the caller's three headers are copied to the model server as they came, so
 * a mesh or a traced model server still sees one trace.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import { tracingEnabled } from '../runtime/telemetry.js';
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

/** A traced call, as the prediction pipeline sees it. */
export interface CallSpan extends UpstreamTrace {
  /** Names the call once the path is parsed (low cardinality: the method, not the endpoint). */
  describe(
    method: string,
    namespace: string | undefined,
    endpoint: string | undefined,
    resourceName: string | undefined,
  ): void;
  end(code: number, deployedModelId: string | undefined): void;
}

const SERVER_SPAN_NAME = 'POST /v1/{endpoint}';
const SERVER_SPAN_ATTRIBUTES: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: 'POST' };

/** server.address / server.port of a model server's origin. */
function addressOf(origin: string): { host: string; port: number } {
  const url = new URL(origin);
  return { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}

/** The SERVER span of one prediction call. */
export class CallTrace implements CallSpan {
  private readonly context: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  describe(
    method: string,
    namespace: string | undefined,
    endpoint: string | undefined,
    resourceName: string | undefined,
  ): void {
    this.span.updateName(`POST /v1/{endpoint}:${method}`);
    this.span.setAttribute(SPAN_ATTRIBUTES.method, method);
    if (namespace !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.namespace, namespace);
    if (endpoint !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.endpoint, endpoint);
    if (resourceName !== undefined) this.span.setAttribute(SPAN_ATTRIBUTES.endpointResourceName, resourceName);
  }

  attempt(target: Target, headers: Record<string, string>, retry: boolean): AttemptTrace {
    const address = addressOf(target.origin);
    const span = this.tracer.startSpan(
      'POST',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: 'POST',
          [ATTR_SERVER_ADDRESS]: address.host,
          [ATTR_SERVER_PORT]: address.port,
          [SPAN_ATTRIBUTES.retry]: retry,
        },
      },
      this.context,
    );
    const sent = { ...headers };
    // An unsampled trace's client span records nothing, but its context (a fresh span id, the flag off) still goes on.
    propagation.inject(trace.setSpan(this.context, span), sent);
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

export class GatewayTracing {
  readonly enabled = tracingEnabled();
  private readonly tracer = trace.getTracer('endpoint-operator-gateway');

  /** The call's span, continuing the caller's trace context; `undefined` with tracing off. */
  startCall(headers: IncomingHttpHeaders): CallSpan | undefined {
    if (!this.enabled) return undefined;
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = this.tracer.startSpan(
      SERVER_SPAN_NAME,
      { kind: SpanKind.SERVER, attributes: SERVER_SPAN_ATTRIBUTES },
      parent,
    );
    return new CallTrace(this.tracer, span, parent);
  }

  /** With tracing off: the caller's trace context headers, copied to the model server's request as they came. */
  static forward(from: IncomingHttpHeaders, to: Record<string, string>): void {
    for (const name of CONTEXT_HEADERS) {
      const value = from[name];
      if (typeof value === 'string') to[name] = value;
    }
  }
}
