import { ROOT_CONTEXT, SamplingDecision, SpanKind, trace, type Context } from '@opentelemetry/api';
import { BasicTracerProvider, type Sampler } from '@opentelemetry/sdk-trace-base';
// The SDK's own reading of OTEL_TRACES_SAMPLER / _ARG (from process.env), which samplerFromEnvironment must agree with.
import { buildSamplerFromEnv } from '@opentelemetry/sdk-trace-base/build/src/config.js';
import { afterEach, describe, expect, it } from 'vitest';
import { FirstDecisionSampler, PresetTraceIds, RootSampling, samplerFromEnvironment } from '../../../src/runtime/root-sampling.js';

const SAMPLER_ENV = ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'] as const;
const saved = Object.fromEntries(SAMPLER_ENV.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const k of SAMPLER_ENV) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

/** The SDK's sampler for `env`, built by the SDK from process.env. */
function sdkSampler(env: Record<string, string>): Sampler {
  for (const k of SAMPLER_ENV) {
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  return buildSamplerFromEnv();
}

const sampledRoot = (sampler: Sampler, traceId: string, context: Context = ROOT_CONTEXT): boolean =>
  sampler.shouldSample(context, traceId, 'POST', SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;

/** A trace id whose four big-endian words XOR to `x` (and never all zeros). */
const idAccumulating = (x: number): string => (x === 0 ? `${'00000001'.repeat(2)}${'0'.repeat(16)}` : `${x.toString(16).padStart(8, '0')}${'0'.repeat(24)}`);

/** The XOR of a hex trace id's four 32-bit words, read from the hex. */
const accumulatedOfHex = (id: string): number => [0, 8, 16, 24].reduce((acc, i) => (acc ^ Number.parseInt(id.slice(i, i + 8), 16)) >>> 0, 0);

describe('samplerFromEnvironment: the SDK\'s reading of OTEL_TRACES_SAMPLER / _ARG', () => {
  const envs: Record<string, string>[] = [
    {},
    { OTEL_TRACES_SAMPLER: 'always_on' },
    { OTEL_TRACES_SAMPLER: 'always_off' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_off' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ' 0.5 ' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1e-7' },
    { OTEL_TRACES_SAMPLER: 'traceidratio' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '-0.5' },
    { OTEL_TRACES_SAMPLER: '  ' },
    { OTEL_TRACES_SAMPLER: 'jaeger_remote' },
  ];

  it.each(envs)('%j: the same sampler, and its root decision is the bound on the id\'s words', (env) => {
    const sdk = sdkSampler(env);
    const ours = samplerFromEnvironment(env);
    expect(ours.sampler.toString()).toBe(sdk.toString());
    // The bound, found in the SDK's sampler itself: ids accumulating to just below it are sampled, at it not.
    if (ours.rootBound > 0) expect(sampledRoot(sdk, idAccumulating(ours.rootBound - 1))).toBe(true);
    if (ours.rootBound <= 0xffffffff) expect(sampledRoot(sdk, idAccumulating(ours.rootBound))).toBe(false);
    // And on random ids, as the gateway decides them.
    const ids = new PresetTraceIds();
    for (let i = 0; i < 4_000; i++) {
      const at = ids.takeTraceId();
      const id = ids.hexAt(at, 16);
      expect(ids.accumulated(at) < ours.rootBound).toBe(sampledRoot(sdk, id));
    }
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

  it('accumulates a trace id\'s words as they read in its hex', () => {
    const ids = new PresetTraceIds();
    for (let i = 0; i < 1_000; i++) {
      const at = ids.takeTraceId();
      expect(ids.accumulated(at)).toBe(accumulatedOfHex(ids.hexAt(at, 16)));
    }
  });
});

describe('FirstDecisionSampler', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const counting = (decision: SamplingDecision): { sampler: Sampler; calls: () => number } => {
    let calls = 0;
    return { sampler: { shouldSample: () => (calls++, { decision }), toString: () => 'counting' }, calls: () => calls };
  };

  it('answers the tracer\'s question about a root decided sampled without asking the sampler, once', () => {
    const inner = counting(SamplingDecision.NOT_RECORD);
    const sampler = new FirstDecisionSampler(inner.sampler);
    sampler.expectSampledRoot(TRACE);
    expect(sampler.shouldSample(ROOT_CONTEXT, TRACE, 'POST', SpanKind.SERVER, {}, []).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(inner.calls()).toBe(0);
    // Once only: the next question (a child span of the same trace, here) goes to the sampler.
    expect(sampler.shouldSample(ROOT_CONTEXT, TRACE, 'POST', SpanKind.CLIENT, {}, []).decision).toBe(SamplingDecision.NOT_RECORD);
    expect(inner.calls()).toBe(1);
  });

  it('asks the sampler for another trace id or a span with a parent', () => {
    const inner = counting(SamplingDecision.NOT_RECORD);
    const sampler = new FirstDecisionSampler(inner.sampler);
    sampler.expectSampledRoot(TRACE);
    sampler.shouldSample(ROOT_CONTEXT, 'a'.repeat(32), 'POST', SpanKind.SERVER, {}, []);
    expect(inner.calls()).toBe(1);
    sampler.expectSampledRoot(TRACE);
    const child = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: '00f067aa0ba902b7', traceFlags: 1 });
    expect(sampler.shouldSample(child, TRACE, 'POST', SpanKind.CLIENT, {}, []).decision).toBe(SamplingDecision.NOT_RECORD);
    expect(inner.calls()).toBe(2);
  });
});

describe('RootSampling.newTrace', () => {
  it('samples the share the ratio asks, each trace as the SDK\'s sampler decides it', () => {
    const env = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' };
    const sdk = sdkSampler(env);
    const sampling = new RootSampling(samplerFromEnvironment(env));
    const n = 20_000;
    let sampled = 0;
    for (let i = 0; i < n; i++) {
      const root = sampling.newTrace();
      expect(root.sampled).toBe(sampledRoot(sdk, root.traceId));
      if (root.sampled) sampled++;
      sampling.ids.presetNextTraceId(undefined);
    }
    // Binomial(20,000, 0.25): σ ≈ 61 traces; 5 σ either way.
    expect(Math.abs(sampled - n / 4)).toBeLessThan(5 * Math.sqrt(n * 0.25 * 0.75));
  });

  it('has the SDK\'s tracer start a sampled trace with its id, recording, without asking the sampler again', () => {
    let asked = 0;
    const environment = samplerFromEnvironment({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    const inner = environment.sampler;
    const sampling = new RootSampling({ ...environment, sampler: { shouldSample: (...args) => (asked++, inner.shouldSample(...args)), toString: () => inner.toString() } });
    const tracer = new BasicTracerProvider({ sampler: sampling.sampler, idGenerator: sampling.ids }).getTracer('test');
    let root = sampling.newTrace();
    while (!root.sampled) root = sampling.newTrace();
    const span = tracer.startSpan('POST', { kind: SpanKind.SERVER }, ROOT_CONTEXT);
    expect(span.spanContext().traceId).toBe(root.traceId);
    expect(span.isRecording()).toBe(true);
    expect(asked).toBe(0);
  });
});
