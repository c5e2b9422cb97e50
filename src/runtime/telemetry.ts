/**
 * The OpenTelemetry SDK, wired once at start-up from the standard environment
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). Code that
 * records spans imports only `@opentelemetry/api`; with no SDK registered the API is a no-op, so
 * tracing that nobody asked for costs nothing.
 *
 * An exporter is configured when `OTEL_TRACES_EXPORTER` names `otlp` or `console`, or, with that
 * variable unset, when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set
 * (the spec's default exporter is otlp, but a binary that starts exporting to localhost:4318
 * because nothing was set would surprise an operator). `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turn it off. The sampler (`OTEL_TRACES_SAMPLER`, `_ARG`), the batch
 * processor (`OTEL_BSP_*`), the OTLP endpoint, headers and timeout, and the resource
 * (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) are read by the SDK packages themselves.
 * Spans go out as OTLP/HTTP JSON, encoded here and sent from a worker thread (worker-span-exporter.ts
 * says why) by the SDK's own OTLP/HTTP transport; the sampler, spans and batch processor stay here.
 */
import { randomFillSync } from 'node:crypto';
import { INVALID_SPANID, INVALID_TRACEID, propagation, ROOT_CONTEXT, SamplingDecision, trace, ProxyTracerProvider, type Attributes, type Context, type Link, type SpanKind, type TracerProvider } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { WorkerSpanExporter } from './worker-span-exporter.js';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, type IdGenerator, type Sampler, type SamplingResult, type SpanExporter } from '@opentelemetry/sdk-trace-base';
// The SDK's own reading of OTEL_TRACES_SAMPLER / _ARG (what BasicTracerProvider does when given no sampler),
// not re-exported from the package's index; the package has no "exports" map, and its version is pinned (~).
import { buildSamplerFromEnv } from '@opentelemetry/sdk-trace-base/build/src/config.js';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export type Environment = Readonly<Record<string, string | undefined>>;

/** Which exporters the environment asks for; empty = tracing off. */
export function tracesExporters(env: Environment): ('otlp' | 'console')[] {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return [];
  const named = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  if (named.length === 0) {
    const endpoint = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim();
    return endpoint === '' ? [] : ['otlp'];
  }
  if (named.includes('none')) return [];
  return named.filter((s): s is 'otlp' | 'console' => s === 'otlp' || s === 'console');
}

/**
 * Random W3C ids, where the next trace id can be set beforehand: a caller that asked the sampler about
 * a trace id before starting any span (tracing.ts) has the SDK's tracer start the trace with that same
 * id. The bytes come from the system's CSPRNG (randomFillSync), 4 KB at a time, rather than from
 * Math.random as the SDK's RandomIdGenerator does: the W3C recommends unpredictable ids, and hex from a
 * pooled buffer is also a third cheaper per id (97 ns against 145 in a loop on Node 20).
 */
export class PresetTraceIds implements IdGenerator {
  private next: string | undefined;
  private readonly pool = Buffer.allocUnsafe(4096);
  private used = this.pool.length;

  generateTraceId(): string {
    const id = this.next ?? this.randomHex(16, INVALID_TRACEID);
    this.next = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.randomHex(8, INVALID_SPANID);
  }

  /** The id the next generateTraceId returns (once); `undefined` forgets one not taken. */
  presetNextTraceId(id: string | undefined): void {
    this.next = id;
  }

  private randomHex(bytes: number, invalid: string): string {
    if (this.used + bytes > this.pool.length) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const id = this.pool.toString('hex', this.used, (this.used += bytes));
    return id === invalid ? this.randomHex(bytes, invalid) : id; // all zeros is not a valid id (W3C Trace Context 3.2.2.3)
  }
}

/**
 * The environment's sampler, asked once per trace-starting call: tracing.ts asks it through decideRoot
 * before any span is made, and when that call is recorded, the SDK's tracer, which asks again as it
 * starts the call's span with the same trace id (PresetTraceIds), gets that answer back instead of a
 * second evaluation. Any other span is sampled by the environment's sampler as it is.
 */
export class FirstDecisionSampler implements Sampler {
  private decided: { readonly traceId: string; readonly result: SamplingResult } | undefined;

  constructor(private readonly sampler: Sampler) {}

  /** The sampler's decision for a root span of `traceId`, kept for the tracer's own question about it. */
  decideRoot(traceId: string, spanName: string, kind: SpanKind, attributes: Attributes): SamplingDecision {
    const result = this.sampler.shouldSample(ROOT_CONTEXT, traceId, spanName, kind, attributes, []);
    this.decided = result.decision === SamplingDecision.NOT_RECORD ? undefined : { traceId, result };
    return result.decision;
  }

  shouldSample(context: Context, traceId: string, spanName: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const decided = this.decided;
    if (decided !== undefined) {
      this.decided = undefined;
      if (decided.traceId === traceId && trace.getSpanContext(context) === undefined) return decided.result;
    }
    return this.sampler.shouldSample(context, traceId, spanName, kind, attributes, links);
  }

  toString(): string {
    return this.sampler.toString();
  }
}

/** The registered SDK's sampler and id generator, for a decision taken before any span is made. */
export interface RootSampling {
  readonly sampler: FirstDecisionSampler;
  readonly ids: PresetTraceIds;
}

let registered: RootSampling | undefined;

/** The sampler and ids of the SDK startTelemetry registered; `undefined` when it registered none. */
export function rootSampling(): RootSampling | undefined {
  return registered;
}

export interface Telemetry {
  /** Exports the spans still buffered, then stops (a shutdown step). */
  shutdown(): Promise<void>;
}

/**
 * Registers the SDK globally when the environment asks for an exporter; returns `undefined` (and
 * registers nothing) otherwise. `serviceName` is the default of `OTEL_SERVICE_NAME`.
 */
export function startTelemetry(serviceName: string, env: Environment = process.env): Telemetry | undefined {
  const exporters = tracesExporters(env);
  if (exporters.length === 0) return undefined;
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const spanExporters: SpanExporter[] = exporters.map((e) => (e === 'otlp' ? new WorkerSpanExporter() : new ConsoleSpanExporter()));
  const sampling: RootSampling = { sampler: new FirstDecisionSampler(buildSamplerFromEnv()), ids: new PresetTraceIds() };
  const provider = new BasicTracerProvider({ resource, sampler: sampling.sampler, idGenerator: sampling.ids, spanProcessors: spanExporters.map((e) => new BatchSpanProcessor(e)) });
  trace.setGlobalTracerProvider(provider);
  registered = sampling;
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  return {
    async shutdown() {
      await provider.shutdown();
      if (registered === sampling) registered = undefined;
      trace.disable();
      propagation.disable();
    },
  };
}

// The API's no-op provider: what a fresh proxy delegates to while no SDK is registered.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether an SDK is registered; checked once by hot paths, which then skip tracing entirely. */
export function tracingEnabled(): boolean {
  const provider: TracerProvider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return delegate !== NOOP_PROVIDER;
}
