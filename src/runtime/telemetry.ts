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
 * `OTEL_TRACES_EXPORTER=none` turn it off. The sampler (`OTEL_TRACES_SAMPLER`, `_ARG`) is the SDK's,
 * built from this environment as the SDK reads it (sampler.ts); the batch processor (`OTEL_BSP_*`),
 * the OTLP endpoint, headers and timeout, and the resource (`OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`) are read by the SDK packages themselves.
 * Spans go out as OTLP/HTTP JSON through the SDK's own exporter and batch processor (otlp-span-exporter.ts
 * adds a count of the spans of failed exports).
 */
import { diag, propagation, trace, ProxyTracerProvider, type TracerProvider } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { CountedOtlpSpanExporter } from './otlp-span-exporter.js';
import type { Logger } from '../base/logger.js';
import { logOpenTelemetryDiagnostics } from './otel-diagnostics.js';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { samplerFromEnvironment } from './sampler.js';
import type { Environment } from './environment.js';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** The names OTEL_TRACES_EXPORTER lists (trimmed, lower case). */
function namedExporters(env: Environment): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
}

/** Which exporters the environment asks for; empty = tracing off. */
export function tracesExporters(env: Environment): ('otlp' | 'console')[] {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return [];
  const named = namedExporters(env);
  if (named.length === 0) {
    const endpoint = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim();
    return endpoint === '' ? [] : ['otlp'];
  }
  if (named.includes('none')) return [];
  return named.filter((s): s is 'otlp' | 'console' => s === 'otlp' || s === 'console');
}

const KNOWN_EXPORTERS = new Set(['otlp', 'console', 'none']);

export interface Telemetry {
  /** Exports the spans still buffered, then stops (a shutdown step). */
  shutdown(): Promise<void>;
}

/**
 * Registers the SDK globally when the environment asks for an exporter; returns `undefined` (and
 * registers no SDK) otherwise. `serviceName` is the default of `OTEL_SERVICE_NAME`. With `log`, the
 * SDK's own diagnostics (failed exports, OTEL_* values it could not read) are logged there
 * (otel-diagnostics.ts), and so is an exporter OTEL_TRACES_EXPORTER names that this binary has not.
 */
export function startTelemetry(
  serviceName: string,
  env: Environment = process.env,
  log?: Logger,
): Telemetry | undefined {
  if (log !== undefined) logOpenTelemetryDiagnostics(log, env);
  for (const name of namedExporters(env)) {
    if (!KNOWN_EXPORTERS.has(name))
      diag.warn(
        `OTEL_TRACES_EXPORTER names "${name}", an exporter this binary does not have (it has otlp, console and none): ignored`,
      );
  }
  const exporters = tracesExporters(env);
  if (exporters.length === 0) return undefined;
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const spanExporters: SpanExporter[] = exporters.map((e) =>
    e === 'otlp' ? new CountedOtlpSpanExporter() : new ConsoleSpanExporter(),
  );
  const provider = new BasicTracerProvider({
    resource,
    sampler: samplerFromEnvironment(env),
    spanProcessors: spanExporters.map((e) => new BatchSpanProcessor(e)),
  });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  return {
    async shutdown() {
      await provider.shutdown();
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
