import { ROOT_CONTEXT, SamplingDecision, SpanKind, trace } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { FirstDecisionSampler, PresetTraceIds, startTelemetry, tracesExporters, tracingEnabled } from '../../../src/runtime/telemetry.js';

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

describe('PresetTraceIds', () => {
  it('makes valid, distinct W3C ids past many refills of its random pool, and a preset trace id once', () => {
    const ids = new PresetTraceIds();
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      traces.add(ids.generateTraceId());
      spans.add(ids.generateSpanId());
    }
    expect(traces.size).toBe(2_000);
    expect(spans.size).toBe(2_000);
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
    ids.presetNextTraceId('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(ids.generateTraceId()).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(ids.generateTraceId()).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});

describe('FirstDecisionSampler', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const counting = (decision: SamplingDecision): { sampler: Sampler; calls: () => number } => {
    let calls = 0;
    return { sampler: { shouldSample: () => (calls++, { decision }), toString: () => 'counting' }, calls: () => calls };
  };

  it('answers the tracer\'s question about a decided root with the same result, asking the sampler once', () => {
    const inner = counting(SamplingDecision.RECORD_AND_SAMPLED);
    const sampler = new FirstDecisionSampler(inner.sampler);
    expect(sampler.decideRoot(TRACE, 'POST', SpanKind.SERVER, {})).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(sampler.shouldSample(ROOT_CONTEXT, TRACE, 'POST', SpanKind.SERVER, {}, []).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(inner.calls()).toBe(1);
    // Once only: the next question (a child span of the same trace, here) goes to the sampler.
    sampler.shouldSample(ROOT_CONTEXT, TRACE, 'POST', SpanKind.CLIENT, {}, []);
    expect(inner.calls()).toBe(2);
  });

  it('asks the sampler for another trace id, a span with a parent, or after a decision not to record', () => {
    const inner = counting(SamplingDecision.RECORD_AND_SAMPLED);
    const sampler = new FirstDecisionSampler(inner.sampler);
    sampler.decideRoot(TRACE, 'POST', SpanKind.SERVER, {});
    sampler.shouldSample(ROOT_CONTEXT, 'a'.repeat(32), 'POST', SpanKind.SERVER, {}, []);
    expect(inner.calls()).toBe(2);
    sampler.decideRoot(TRACE, 'POST', SpanKind.SERVER, {});
    const child = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: '00f067aa0ba902b7', traceFlags: 1 });
    sampler.shouldSample(child, TRACE, 'POST', SpanKind.CLIENT, {}, []);
    expect(inner.calls()).toBe(4);
    const dropping = counting(SamplingDecision.NOT_RECORD);
    const unsampled = new FirstDecisionSampler(dropping.sampler);
    unsampled.decideRoot(TRACE, 'POST', SpanKind.SERVER, {});
    unsampled.shouldSample(ROOT_CONTEXT, TRACE, 'POST', SpanKind.SERVER, {}, []);
    expect(dropping.calls()).toBe(2);
  });
});
