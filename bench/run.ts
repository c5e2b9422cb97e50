/**
 * `npm run bench` (or `npm run bench -- webhook` for the benches whose name starts with an argument):
 * every benchmark in turn, each in its own process (and process group) so that one's heap and JIT
 * state do not colour the next and a timeout can end everything it started. Each prints its own
 * figures and records them through bench/results.ts into a fragment file; this runner merges the
 * fragments into bench/results.json and prints one summary table. A bench that exits non-zero,
 * times out or records nothing is recorded as failed, and the exit code is then 1. A goal that is
 * not met is reported (pass: false), not a failure: figures from a loaded machine miss latency
 * goals for reasons the code does not control.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryBudgetSeconds } from './memory/settings.js';
import { formatGoal, formatNumber, readFragment, type ResultEntry } from './results.js';

interface Bench {
  readonly name: string;
  readonly file: string;
  readonly what: string;
  readonly timeoutSeconds: number;
}

interface BenchRecord {
  readonly file: string;
  readonly what: string;
  readonly status: 'ok' | 'failed';
  readonly failure?: string;
  readonly startedAt: string;
  /** 1, 5 and 15 minute load averages when the bench started: the figures of a shared machine need them. */
  readonly loadavgAtStart: number[];
  readonly durationSeconds: number;
  readonly entries: ResultEntry[];
  readonly details: Record<string, unknown>;
}

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const benches: readonly Bench[] = [
  {
    name: 'validate',
    file: 'validate.ts',
    what: 'B4 validators and `endpoint-operator validate` over 10,000 manifests',
    timeoutSeconds: 180,
  },
  {
    name: 'validate-prediction',
    file: 'validate-prediction.ts',
    what: 'B4 validations per second of each prediction validator',
    timeoutSeconds: 120,
  },
  { name: 'webhook', file: 'webhook.ts', what: 'B4 admission webhook latency at 200 requests/s', timeoutSeconds: 180 },
  {
    name: 'webhook-old-new',
    file: 'webhook-old-new.ts',
    what: "B4-old-new: this webhook server against the last commit's before HTTP/2 (08248cf) in one run, over HTTP/1.1 (the only protocol the port offers): CPU per review in blocks that call every arm, p50 one review at a time",
    timeoutSeconds: 540,
  },
  {
    name: 'webhook-cel',
    file: 'cel-writes.ts',
    what: 'B4 apiserver create latency of 4,010 objects and the webhook p99, CRDs with and without their CEL rules (starts a control plane)',
    timeoutSeconds: env('BENCH_TIMEOUT_S', 900) + 120,
  },
  {
    name: 'signin',
    file: 'signin.ts',
    what: 'B5 sign-in: /auth/pos/me against a bare fastify route, login latency',
    timeoutSeconds: 180,
  },
  {
    name: 'signin-flood',
    file: 'signin-flood.ts',
    what: 'B5-flood: correct logins from one address while another floods unknown-email logins (fair verification queue)',
    timeoutSeconds: 120,
  },
  {
    name: 'gateway',
    file: 'gateway.ts',
    what: 'B6 prediction gateway: added latency and CPU per call at 1,000 calls/s (starts a control plane)',
    timeoutSeconds: 300,
  },
  {
    name: 'tracing',
    file: 'tracing.ts',
    what: 'B6 with OpenTelemetry: gateway CPU and latency with tracing off, sampled at 0.01 and at 1.0 (starts a control plane)',
    timeoutSeconds: 720,
  },
  {
    name: 'gateway-auth',
    file: 'gateway-auth.ts',
    what: 'B6 with auth on (warm caches) against off over 5 rounds of fresh processes: CPU in paired blocks, p50 from calls interleaved one at a time; B6-auth-cold: 1,000 invalid tokens/s (starts a control plane)',
    // Its own bound (240 s of measured blocks, 300 s of warm-ups, 180 s to set up and stop), then a minute.
    timeoutSeconds: 780,
  },
  {
    name: 'gateway-old-new',
    file: 'gateway-old-new.ts',
    what: "B6-old-new: this gateway against an earlier commit's (4b8eaec) in one run, auth off, on and traced: CPU per call in paired blocks, added p50 (starts a control plane)",
    timeoutSeconds: 600,
  },
  {
    name: 'grpc',
    file: 'grpc.ts',
    what: 'B6-grpc: gRPC Predict against REST :predict on the TLS port, and REST over TLS against plain HTTP: CPU per call in paired blocks, added p50 (starts a control plane)',
    timeoutSeconds: 180 + 150 * env('BENCH_GRPC_ROUNDS', 2),
  },
  {
    name: 'gateway-fair',
    file: 'gateway-fair.ts',
    what: 'B6-fair: a 50/s small caller beside one looping 1.4 MB bodies, p99 ÷ alone (starts a control plane)',
    timeoutSeconds: 240,
  },
  {
    name: 'resolve',
    file: 'resolve.ts',
    what: 'B7 registry resolve over 10,000 cached endpoints at a fixed rate; EndpointSlice write after an endpoint change',
    timeoutSeconds: 240,
  },
  {
    name: 'convergence',
    file: 'convergence.ts',
    what: 'B1/B2 objects to Ready against a bare client (starts a control plane)',
    timeoutSeconds: env('BENCH_TIMEOUT_S', 900) + 120,
  },
  {
    name: 'dev-start',
    file: 'dev-start.ts',
    what: "Issue 50: a warm `npm start` with the real node to its printed :predict, and Ctrl-C to every process gone (starts `npm start` 4 times; waits for the machine's real node)",
    timeoutSeconds: 1800 + 4 * 240,
  },
  {
    name: 'gateway-load',
    file: 'gateway-load.ts',
    what: "Issue 49: ghz (gRPC Predict) and h2load (REST :predict, HTTP/2 and HTTP/1.1) against the chart's gateway on the real node: calls/s, p50/p99, failures, the gateway pods' CPU per call (builds the image; waits for the machine's real node)",
    timeoutSeconds: 1800 + 600,
  },
  {
    name: 'serving',
    file: 'serving.ts',
    what: 'B8 DeployedModels with containerSpec to Ready on kwok nodes against a bare client creating the same Deployments and Services; operator RSS (starts a control plane)',
    timeoutSeconds: env('BENCH_TIMEOUT_S', 900) + 120,
  },
  {
    name: 'memory',
    file: 'memory.ts',
    what: 'B3 operator RSS with 10,000 objects cached, heap under steady churn (starts a control plane)',
    timeoutSeconds: memoryBudgetSeconds() + 120,
  },
];

/** BENCH_MAX_S caps every bench's time (e.g. for a CI job with its own budget). */
const maxSeconds = process.env['BENCH_MAX_S'] ? Number(process.env['BENCH_MAX_S']) : Infinity;
const timeoutOf = (bench: Bench): number => Math.min(bench.timeoutSeconds, maxSeconds);

const RESULTS_FILE = fileURLToPath(new URL('results.json', import.meta.url));
const KILL_GRACE_MS = 15_000;

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

let current: number | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // The benches run in their own process groups, so a Ctrl-C on the terminal does not reach them by itself.
    if (current !== undefined) signalGroup(current, 'SIGTERM');
    console.error(`\n${signal}: stopping the running benchmark`);
    interrupted = true;
  });
}

async function runOne(bench: Bench, fragmentFile: string): Promise<BenchRecord> {
  const startedAt = new Date();
  const loadavgAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(bench.file, import.meta.url))], {
    stdio: 'inherit',
    detached: true,
    env: { ...process.env, BENCH_RESULT_FILE: fragmentFile },
  });
  const pid = child.pid;
  current = pid;
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const timeout = setTimeout(
    () => {
      timedOut = true;
      console.error(`${bench.file}: no result within ${timeoutOf(bench)} s; ending its process group`);
      if (pid !== undefined) signalGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => pid !== undefined && signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    },
    timeoutOf(bench) * 1000,
  );
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timeout);
  clearTimeout(killTimer);
  // Anything the bench forked into its group and left behind.
  if (pid !== undefined) signalGroup(pid, 'SIGKILL');
  current = undefined;
  const fragment = readFragment(fragmentFile) ?? { entries: [], details: {} };
  const failure = timedOut
    ? `timed out after ${timeoutOf(bench)} s`
    : exit.error
      ? `could not start: ${exit.error.message}`
      : exit.code !== 0
        ? `exited with ${exit.code ?? exit.signal ?? 'unknown'}`
        : fragment.entries.length === 0
          ? 'exited 0 but recorded no figures (not wired to bench/results.ts?)'
          : undefined;
  return {
    file: bench.file,
    what: bench.what,
    status: failure ? 'failed' : 'ok',
    ...(failure ? { failure } : {}),
    startedAt: startedAt.toISOString(),
    loadavgAtStart,
    durationSeconds: Number(((Date.now() - startedAt.getTime()) / 1000).toFixed(1)),
    entries: fragment.entries,
    details: fragment.details,
  };
}

/** The benches of earlier runs that this run did not repeat (a partial run updates only its own). */
function previousBenches(): Record<string, BenchRecord> {
  if (!existsSync(RESULTS_FILE)) return {};
  try {
    const parsed = JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as { benches?: Record<string, BenchRecord> };
    return parsed.benches ?? {};
  } catch {
    return {};
  }
}

function printSummary(records: Record<string, BenchRecord>): void {
  const rows: string[][] = [['id', 'value', 'unit', 'goal', 'pass']];
  for (const r of Object.values(records)) {
    for (const e of r.entries)
      rows.push([
        e.id,
        formatNumber(e.value),
        e.unit,
        formatGoal(e.goal),
        e.pass === undefined ? '' : e.pass ? 'yes' : 'NO',
      ]);
  }
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length)));
  console.log('\n=== summary');
  for (const row of rows)
    console.log(
      row
        .map((cell, col) => (col === 1 ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
        .join('  ')
        .trimEnd(),
    );
  for (const [name, r] of Object.entries(records))
    if (r.status === 'failed') console.log(`FAILED ${name} (${r.file}): ${r.failure ?? ''}`);
}

async function main(): Promise<number> {
  const only = process.argv.slice(2);
  // A bench's exact name selects it alone (`gateway` is also the start of three others); any other word, those it starts.
  const selects = (b: Bench, o: string): boolean =>
    benches.some((x) => x.name === o) ? b.name === o : b.name.startsWith(o);
  const selected = benches.filter((b) => only.length === 0 || only.some((o) => selects(b, o)));
  if (selected.length === 0) {
    console.error(`no benchmark matches ${only.join(', ')}; known: ${benches.map((b) => b.name).join(', ')}`);
    return 2;
  }
  const header = {
    generatedAt: new Date().toISOString(),
    node: process.version,
    cpus: { count: cpus().length, model: cpus()[0]?.model ?? 'unknown' },
    loadavgAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    gitCommit: git(['rev-parse', 'HEAD']) ?? null,
    // --no-optional-locks: reading the status must not touch the index of a tree others are working in.
    gitDirty: git(['--no-optional-locks', 'status', '--porcelain']) ? true : false,
    command: ['npm run bench', ...(only.length > 0 ? ['--', ...only] : [])].join(' '),
  };
  const dir = mkdtempSync(join(tmpdir(), 'eo-bench-'));
  const records: Record<string, BenchRecord> = {};
  try {
    for (const bench of selected) {
      if (interrupted) break;
      console.log(`\n=== ${bench.name} (${bench.file}): ${bench.what}`);
      const record = await runOne(bench, join(dir, `${bench.name}.json`));
      records[bench.name] = record;
      if (record.failure) console.log(`${bench.file} FAILED: ${record.failure}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const merged = { ...header, benches: { ...previousBenches(), ...records } };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(merged, null, 2)}\n`);
  printSummary(records);
  const failed = Object.values(records).filter((r) => r.status === 'failed').length;
  const missed = Object.values(records)
    .flatMap((r) => r.entries)
    .filter((e) => e.pass === false).length;
  console.log(
    `\n${Object.keys(records).length} benchmarks, ${failed} failed, ${missed} goals not met; written to bench/results.json (load average at start ${header.loadavgAtStart.join(' ')} on ${header.cpus.count} cores)`,
  );
  return failed > 0 || interrupted ? 1 : 0;
}

process.exitCode = await main();
