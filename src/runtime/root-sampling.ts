/**
 * The sampler of the standard environment (`OTEL_TRACES_SAMPLER`, `_ARG`), and how a call that starts a
 * trace is decided before any span is made.
 *
 * Every sampler the environment can name decides a root span on its trace id alone, by one rule: the
 * SDK's TraceIdRatioBasedSampler samples a trace when the XOR of its id's four big-endian 32-bit words is
 * below a bound (ratio × (2³² − 1)); `always_on` is the bound 2³², `always_off` 0, and the parent-based
 * ones decide a root as their root sampler does. So the gateway decides a new trace on the id's random
 * bytes, where they are made, with no hex parsing and no span or context: in the gateway, 99 calls in 100
 * at the chart's 0.01. A unit test holds this rule to the SDK's own samplers, built by the SDK's own
 * reading of the environment, on random and boundary ids.
 */
import { randomFillSync } from 'node:crypto';
import { diag, SamplingDecision, trace, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type IdGenerator, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-base';
import type { Environment } from './telemetry.js';

/** The bound of a sampler that samples every root (`always_on`, or a ratio of 1). */
const EVERY_ROOT = 0x1_0000_0000;

/** TraceIdRatioBasedSampler's bound for a ratio, by its constructor's rule (not a number: 0; clamped to [0, 1]). */
function ratioBound(ratio: number): number {
  const r = Number.isNaN(ratio) ? 0 : Math.min(1, Math.max(0, ratio));
  return r === 1 ? EVERY_ROOT : Math.floor(r * 0xffffffff);
}

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

/** The environment's sampler, and the bound it decides a root span by. */
export interface EnvironmentSampler {
  readonly sampler: Sampler;
  /** A root span of a trace is sampled when its id's accumulated words (PresetTraceIds.accumulated) are below it. */
  readonly rootBound: number;
}

/**
 * The sampler OTEL_TRACES_SAMPLER / _ARG name, built from the SDK's samplers as the SDK's own reading of
 * them (buildSamplerFromEnv in sdk-trace-base) builds it: unset is `parentbased_always_on`, an unknown name
 * is reported and read as that too.
 */
export function samplerFromEnvironment(env: Environment): EnvironmentSampler {
  const name = env.OTEL_TRACES_SAMPLER === undefined || env.OTEL_TRACES_SAMPLER.trim() === '' ? 'parentbased_always_on' : env.OTEL_TRACES_SAMPLER;
  const parentBased = (root: Sampler, rootBound: number): EnvironmentSampler => ({ sampler: new ParentBasedSampler({ root }), rootBound });
  switch (name) {
    case 'always_on':
      return { sampler: new AlwaysOnSampler(), rootBound: EVERY_ROOT };
    case 'always_off':
      return { sampler: new AlwaysOffSampler(), rootBound: 0 };
    case 'parentbased_always_on':
      return parentBased(new AlwaysOnSampler(), EVERY_ROOT);
    case 'parentbased_always_off':
      return parentBased(new AlwaysOffSampler(), 0);
    case 'traceidratio': {
      const ratio = ratioOf(env);
      return { sampler: new TraceIdRatioBasedSampler(ratio), rootBound: ratioBound(ratio) };
    }
    case 'parentbased_traceidratio': {
      const ratio = ratioOf(env);
      return parentBased(new TraceIdRatioBasedSampler(ratio), ratioBound(ratio));
    }
    default:
      diag.error(`OTEL_TRACES_SAMPLER value "${name}" invalid, defaulting to "parentbased_always_on".`);
      return parentBased(new AlwaysOnSampler(), EVERY_ROOT);
  }
}

/** Random bytes drawn per refill: one CSPRNG call and one hex encoding per ~340 calls (24 bytes each). */
const POOL_BYTES = 8192;

/**
 * Random W3C ids from the system's CSPRNG (the W3C recommends unpredictable ids; the SDK's
 * RandomIdGenerator uses Math.random), where the next trace id can be set beforehand, so that the SDK's
 * tracer starts the trace a root decision was taken for (RootSampling.newTrace). The pool is hex-encoded
 * once per refill, so an id is a substring of it: no native call per id.
 */
export class PresetTraceIds implements IdGenerator {
  private next: string | undefined;
  private readonly bytes = new Uint8Array(POOL_BYTES);
  private readonly words = new DataView(this.bytes.buffer);
  private hex = '';
  private used = POOL_BYTES;

  generateTraceId(): string {
    const preset = this.next;
    if (preset !== undefined) {
      this.next = undefined;
      return preset;
    }
    return this.hexAt(this.takeTraceId(), 16);
  }

  generateSpanId(): string {
    let at = this.take(8);
    // All zeros is not a valid id (W3C Trace Context 3.2.2.4).
    while ((this.words.getUint32(at) | this.words.getUint32(at + 4)) === 0) at = this.take(8);
    return this.hexAt(at, 8);
  }

  /** The id the next generateTraceId returns (once); `undefined` forgets one not taken. */
  presetNextTraceId(id: string | undefined): void {
    this.next = id;
  }

  /** Where a fresh trace id's 16 bytes are in the pool (never all zeros); read them before the next take. */
  takeTraceId(): number {
    let at = this.take(16);
    while ((this.words.getUint32(at) | this.words.getUint32(at + 4) | this.words.getUint32(at + 8) | this.words.getUint32(at + 12)) === 0) at = this.take(16);
    return at;
  }

  /** The XOR of the four big-endian 32-bit words of the trace id at `at`: what TraceIdRatioBasedSampler compares with its bound. */
  accumulated(at: number): number {
    return (this.words.getUint32(at) ^ this.words.getUint32(at + 4) ^ this.words.getUint32(at + 8) ^ this.words.getUint32(at + 12)) >>> 0;
  }

  /** Lower-case hex of the `bytes` bytes at `at`. */
  hexAt(at: number, bytes: number): string {
    return this.hex.substring(2 * at, 2 * (at + bytes));
  }

  private take(bytes: number): number {
    if (this.used + bytes > POOL_BYTES) {
      randomFillSync(this.bytes);
      this.hex = Buffer.from(this.bytes.buffer).toString('hex');
      this.used = 0;
    }
    const at = this.used;
    this.used += bytes;
    return at;
  }
}

const SAMPLED: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });

/**
 * The environment's sampler, which answers the SDK tracer's question about the root span of a trace
 * RootSampling.newTrace sampled with that decision instead of a second evaluation. Any other span is
 * sampled by the environment's sampler as it is.
 */
export class FirstDecisionSampler implements Sampler {
  private expected: string | undefined;

  constructor(private readonly sampler: Sampler) {}

  /** The next root span of `traceId` was decided sampled (once). */
  expectSampledRoot(traceId: string): void {
    this.expected = traceId;
  }

  shouldSample(context: Context, traceId: string, spanName: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const expected = this.expected;
    if (expected !== undefined) {
      this.expected = undefined;
      if (expected === traceId && trace.getSpanContext(context) === undefined) return SAMPLED;
    }
    return this.sampler.shouldSample(context, traceId, spanName, kind, attributes, links);
  }

  toString(): string {
    return this.sampler.toString();
  }
}

/** A trace a call starts: its id, and whether the environment's sampler records it. */
export interface NewTrace {
  readonly traceId: string;
  readonly sampled: boolean;
}

/** The registered SDK's sampler and id generator, for a decision taken before any span is made. */
export class RootSampling {
  readonly sampler: FirstDecisionSampler;
  readonly ids = new PresetTraceIds();
  private readonly rootBound: number;

  constructor(environment: EnvironmentSampler) {
    this.sampler = new FirstDecisionSampler(environment.sampler);
    this.rootBound = environment.rootBound;
  }

  /**
   * A fresh trace id and the environment sampler's decision for a root span of it. Sampled, the SDK's
   * tracer starts its next span with this id and gets this decision back from the sampler.
   */
  newTrace(): NewTrace {
    const at = this.ids.takeTraceId();
    const sampled = this.ids.accumulated(at) < this.rootBound;
    const traceId = this.ids.hexAt(at, 16);
    if (sampled) {
      this.sampler.expectSampledRoot(traceId);
      this.ids.presetNextTraceId(traceId);
    }
    return { traceId, sampled };
  }
}
