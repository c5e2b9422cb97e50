import { ROOT_CONTEXT, SamplingDecision, SpanKind } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
// The SDK's own reading of OTEL_TRACES_SAMPLER / _ARG (from process.env), which samplerFromEnvironment must agree with.
import { buildSamplerFromEnv } from '@opentelemetry/sdk-trace-base/build/src/config.js';
import { afterEach, describe, expect, it } from 'vitest';
import { samplerFromEnvironment } from '../../../src/runtime/sampler.js';

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

const sampledRoot = (sampler: Sampler, traceId: string): boolean =>
  sampler.shouldSample(ROOT_CONTEXT, traceId, 'POST', SpanKind.SERVER, {}, []).decision ===
  SamplingDecision.RECORD_AND_SAMPLED;

const randomTraceId = (): string =>
  [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

describe("samplerFromEnvironment: the SDK's reading of OTEL_TRACES_SAMPLER / _ARG", () => {
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

  it.each(envs)("%j: the same sampler, deciding roots as the SDK's does", (env) => {
    const sdk = sdkSampler(env);
    const ours = samplerFromEnvironment(env);
    expect(ours.toString()).toBe(sdk.toString());
    for (let i = 0; i < 1_000; i++) {
      const id = randomTraceId();
      expect(sampledRoot(ours, id)).toBe(sampledRoot(sdk, id));
    }
  });
});
