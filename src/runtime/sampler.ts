/**
 * The sampler of the standard environment (`OTEL_TRACES_SAMPLER`, `_ARG`), read from the environment
 * startTelemetry is given rather than from process.env (which is what the SDK's own reading uses), so a
 * test or an embedding process can pass its own. Built from the SDK's samplers by the SDK's rules
 * (buildSamplerFromEnv in sdk-trace-base); a unit test holds the two readings to each other.
 */
import { diag } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import type { Environment } from './environment.js';

/** OTEL_TRACES_SAMPLER_ARG as the SDK reads it for the ratio samplers: blank, not a number or outside [0, 1] is 1. */
function ratioOf(env: Environment): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG;
  const value = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  if (Number.isNaN(value)) {
    diag.error(`OTEL_TRACES_SAMPLER_ARG ${JSON.stringify(raw ?? '')} is not a number, defaulting to 1.`);
    return 1;
  }
  if (value < 0 || value > 1) {
    diag.error(`OTEL_TRACES_SAMPLER_ARG=${value} was given, but it is out of range ([0..1]), defaulting to 1.`);
    return 1;
  }
  return value;
}

/** The sampler OTEL_TRACES_SAMPLER / _ARG name: unset is `parentbased_always_on`, an unknown name is reported and read as that too. */
export function samplerFromEnvironment(env: Environment): Sampler {
  const name =
    env.OTEL_TRACES_SAMPLER === undefined || env.OTEL_TRACES_SAMPLER.trim() === ''
      ? 'parentbased_always_on'
      : env.OTEL_TRACES_SAMPLER;
  const parentBased = (root: Sampler): Sampler => new ParentBasedSampler({ root });
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'parentbased_always_on':
      return parentBased(new AlwaysOnSampler());
    case 'parentbased_always_off':
      return parentBased(new AlwaysOffSampler());
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratioOf(env));
    case 'parentbased_traceidratio':
      return parentBased(new TraceIdRatioBasedSampler(ratioOf(env)));
    default:
      diag.error(`OTEL_TRACES_SAMPLER value "${name}" invalid, defaulting to "parentbased_always_on".`);
      return parentBased(new AlwaysOnSampler());
  }
}
