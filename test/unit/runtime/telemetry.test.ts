import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { startTelemetry, tracesExporters, tracingEnabled } from '../../../src/runtime/telemetry.js';

describe('tracesExporters (the OTEL_* environment)', () => {
  it.each([
    [{}, []],
    [{ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }, []],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, ['otlp']],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, ['otlp']],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, []],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, ['otlp']],
    [{ OTEL_TRACES_EXPORTER: 'console, otlp' }, ['console', 'otlp']],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, []],
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, []],
    [{ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' }, []],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, ['otlp']],
  ])('%j → %j', (env, want) => {
    expect(tracesExporters(env)).toEqual(want);
  });
});

describe('startTelemetry', () => {
  it('registers nothing when no exporter is asked for: the API stays a no-op', () => {
    expect(startTelemetry('test', { OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
    expect(tracingEnabled()).toBe(false);
    expect(trace.getTracer('t').startSpan('s').isRecording()).toBe(false);
  });

  it('registers the SDK when asked, and unregisters it on shutdown', async () => {
    const telemetry = startTelemetry('test', { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'always_off' });
    expect(telemetry).toBeDefined();
    expect(tracingEnabled()).toBe(true);
    await telemetry?.shutdown();
    expect(tracingEnabled()).toBe(false);
  });
});
