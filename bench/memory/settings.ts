/**
 * The knobs of the B3 memory benchmark (environment variables), in one place so that bench/run.ts
 * can derive the same time budget the benchmark gives itself.
 */
export interface MemorySettings {
  /** Objects in the cache: a quarter PredictionEndpoints, half DeployedModels (two per endpoint), 10 RegistryServices, the rest RegistryEndpoints. */
  readonly objects: number;
  /** Seconds of steady churn after convergence (the "10 minutes"). */
  readonly churnSeconds: number;
  /** Churn actions started per second (an action is one to seven API writes, see churn.ts). */
  readonly churnRate: number;
  /** Interval of the /metrics and /proc samples. */
  readonly sampleSeconds: number;
  /** Interval of the forced full-GC heap probes (the live-heap series the trend is judged on). */
  readonly probeSeconds: number;
  /** Requests in flight while creating the objects. */
  readonly createConcurrency: number;
  /** --workers of the operator under test (its default is 4). */
  readonly workers: number;
  /** Bound on each wait for convergence (initial, and after the churn). */
  readonly convergeTimeoutSeconds: number;
  /** Extra V8/Node flags for the operator process (BENCH_NODE_FLAGS, space-separated), to try a tuning such as --max-semi-space-size. */
  readonly nodeFlags: readonly string[];
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}

export function memorySettings(): MemorySettings {
  const churnSeconds = positive('BENCH_CHURN_S', 600);
  return {
    objects: Math.max(100, Math.round(positive('BENCH_MEMORY_OBJECTS', 10_000))),
    churnSeconds,
    churnRate: positive('BENCH_CHURN_RATE', 10),
    sampleSeconds: positive('BENCH_SAMPLE_S', 10),
    // At least eight probes over the churn, so a short development run still fits a line.
    probeSeconds: positive('BENCH_PROBE_S', Math.min(30, churnSeconds / 8)),
    createConcurrency: Math.round(positive('BENCH_CONCURRENCY', 16)),
    workers: Math.round(positive('BENCH_WORKERS', 4)),
    convergeTimeoutSeconds: positive('BENCH_CONVERGE_TIMEOUT_S', 600),
    nodeFlags: (process.env['BENCH_NODE_FLAGS'] ?? '').split(/\s+/).filter((f) => f !== ''),
  };
}

/** The whole benchmark's bound: control plane and creation, two convergence waits, the churn. */
export function memoryBudgetSeconds(settings: MemorySettings = memorySettings()): number {
  return Number(
    process.env['BENCH_MEMORY_TIMEOUT_S'] ?? 300 + 2 * settings.convergeTimeoutSeconds + settings.churnSeconds,
  );
}
