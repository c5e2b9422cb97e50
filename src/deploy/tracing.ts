/**
 * The OTEL_* environment the chart gives the operator and the gateway (src/runtime/telemetry.ts
 * reads it): with `tracing.otlpEndpoint` empty nothing is set and tracing is off.
 */
import type { DeployValues } from './values.js';

export function tracingEnv(values: DeployValues, serviceName: string): { name: string; value: string }[] {
  const t = values.tracing;
  if (t.otlpEndpoint === '') return [];
  return [
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: t.otlpEndpoint },
    { name: 'OTEL_TRACES_SAMPLER', value: t.sampler },
    { name: 'OTEL_TRACES_SAMPLER_ARG', value: t.samplerArg },
    { name: 'OTEL_SERVICE_NAME', value: serviceName },
  ];
}
