import { TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { ROOT_CONTEXT, SamplingDecision } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayTracing } from '../../../src/gateway/tracing.js';
import { startTelemetry, type Telemetry } from '../../../src/runtime/telemetry.js';

const target = { origin: 'http://127.0.0.1:9000', basePath: '' };
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;
let telemetry: Telemetry | undefined;

/** The SDK registered as the gateway does, the sampler from OTEL_TRACES_SAMPLER(_ARG) in process.env, spans never exported (none is ended). */
function tracingWith(sampler: string, arg: string): GatewayTracing {
  const env = { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg };
  Object.assign(process.env, env);
  telemetry = startTelemetry('test', env);
  for (const key of Object.keys(env)) delete process.env[key];
  return new GatewayTracing();
}

afterEach(async () => {
  await telemetry?.shutdown();
  telemetry = undefined;
});

describe('GatewayTracing: a call that starts a trace', () => {
  it('is sampled exactly when the SDK sampler samples the trace id it is sent with', () => {
    const tracing = tracingWith('parentbased_traceidratio', '0.5');
    const ratio = new TraceIdRatioBasedSampler(0.5);
    let sampled = 0;
    for (let i = 0; i < 400; i++) {
      const call = tracing.startCall({ host: 'gateway' });
      const [, traceId = '', , flags] =
        TRACEPARENT.exec(
          call?.attempt(target, { 'content-type': 'application/json' }, false).headers['traceparent'] ?? '',
        ) ?? [];
      const decision = ratio.shouldSample(ROOT_CONTEXT, traceId).decision;
      // The decision taken before any span and the tracer's own (with the preset id) agree with the sampler's rule.
      expect(flags).toBe(decision === SamplingDecision.RECORD_AND_SAMPLED ? '01' : '00');
      if (flags === '01') sampled++;
    }
    // Half of them (binomial, 400 draws: 200 ± 10). Without the tracer reusing the id the decision was taken on,
    // a call would be sampled only when two independent ids both were: a quarter.
    expect(sampled).toBeGreaterThan(150);
    expect(sampled).toBeLessThan(250);
  });

  it('unsampled: one trace id, a fresh parent id per attempt, the flag off, and the caller headers kept', () => {
    const tracing = tracingWith('traceidratio', '0');
    const call = tracing.startCall({ host: 'gateway' });
    const first = call?.attempt(target, { 'content-type': 'application/json' }, false).headers;
    const retry = call?.attempt(target, { 'content-type': 'application/json' }, true).headers;
    const [a, b] = [TRACEPARENT.exec(first?.['traceparent'] ?? ''), TRACEPARENT.exec(retry?.['traceparent'] ?? '')];
    expect(a?.[1]).toBe(b?.[1]);
    expect(a?.[2]).not.toBe(b?.[2]);
    expect([a?.[3], b?.[3]]).toEqual(['00', '00']);
    expect(first?.['content-type']).toBe('application/json');
    expect(a?.[1]).not.toBe('0'.repeat(32));
  });

  it('sampled: each attempt names its own client span as the parent, in the one trace, the flag on', () => {
    const tracing = tracingWith('always_on', '');
    const call = tracing.startCall({ host: 'gateway', tracestate: 'alone=ignored' });
    const [a, b] = [false, true].map((retry) =>
      TRACEPARENT.exec(call?.attempt(target, {}, retry).headers['traceparent'] ?? ''),
    );
    expect(a?.[1]).toMatch(/^[0-9a-f]{32}$/);
    expect(b?.[1]).toBe(a?.[1]);
    expect(b?.[2]).not.toBe(a?.[2]);
    expect([a?.[3], b?.[3]]).toEqual(['01', '01']);
  });

  it("a caller's traceparent is continued through the SDK, its decision honoured", () => {
    const tracing = tracingWith('parentbased_traceidratio', '0');
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const sent = tracing.startCall({ traceparent: parent })?.attempt(target, {}, false).headers['traceparent'] ?? '';
    const [, traceId, parentId, flags] = TRACEPARENT.exec(sent) ?? [];
    expect([traceId, flags]).toEqual(['0af7651916cd43dd8448eb211c80319c', '01']);
    expect(parentId).not.toBe('b7ad6b7169203331');
  });
});
