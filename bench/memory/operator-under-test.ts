/**
 * `endpoint-operator run` as the separate process whose memory is measured: the compiled binary
 * (bin/endpoint-operator.js → dist/, what the image runs; `npm run bench` builds it), in its own
 * process group with a watchdog, so nothing outlives the benchmark. Memory is read three ways:
 * /proc/<pid>/status (VmRSS, VmHWM: the kernel's figures), /metrics (what a Prometheus would
 * scrape) and the heap probe (the live heap after a forced full GC, see heap-probe.mjs).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type * as v8 from 'node:v8';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildProcessGroup, signalGroup } from '../../dev/host/child-process-group.js';
import { freeLoopbackPort, isPortConflict } from '../../dev/cluster/ports.js';
import { startWatchdog, type Watchdog } from '../../dev/host/watchdog.js';
import { productionHeapFlags } from './production-heap.js';
import { OPERATOR_MALLOC_ENV, OPERATOR_NODE_FLAGS } from '../../src/deploy/workload.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The node flags the operator under test runs with: the chart's (OPERATOR_NODE_FLAGS), then an experiment's. */
export function operatorNodeFlags(experiment: readonly string[] = []): string[] {
  return [...OPERATOR_NODE_FLAGS, ...experiment];
}
const BIN = join(REPO, 'bin/endpoint-operator.js');
const PROBE = fileURLToPath(new URL('heap-probe.mjs', import.meta.url));

export interface ProcMemory {
  /** Resident set size now. */
  readonly rssBytes: number;
  /** The highest RSS the process has had (high-water mark). */
  readonly peakRssBytes: number;
}

/** One of V8's heap spaces (v8.getHeapSpaceStatistics()): what it has committed and what of that is in use. */
export interface HeapSpace {
  readonly name: string;
  readonly committedBytes: number;
  readonly usedBytes: number;
}

export interface HeapProbe {
  /** Heap in use just before the forced GC (live data plus garbage not yet collected). */
  readonly heapUsedBeforeBytes: number;
  /** Heap in use after a full mark-compact GC: the live set. */
  readonly heapUsedAfterBytes: number;
  readonly rssAfterBytes: number;
  readonly spacesBefore: readonly HeapSpace[];
  readonly spacesAfter: readonly HeapSpace[];
}

function heapSpaces(stats: readonly v8.HeapSpaceInfo[] | undefined): HeapSpace[] {
  return (stats ?? []).map((s) => ({ name: s.space_name, committedBytes: s.space_size, usedBytes: s.space_used_size }));
}

/** The src files compiled after dist was built, so a stale build is reported rather than measured silently. */
export function staleBuildFiles(): string[] {
  const stale: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const compiled = join(REPO, 'dist', relative(REPO, path)).replace(/\.ts$/, '.js');
        if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(path).mtimeMs)
          stale.push(relative(REPO, path));
      }
    }
  };
  walk(join(REPO, 'src'));
  return stale;
}

export class OperatorUnderTest {
  private probeSeq = 0;

  private constructor(
    private readonly group: ChildProcessGroup,
    private readonly watchdog: Watchdog,
    readonly port: number,
    readonly logFile: string,
    private readonly dir: string,
    private readonly probeFile: string,
  ) {}

  /**
   * Starts `run` against one namespace, without webhooks or leader election; /metrics and /readyz
   * share one port. The process gets the heap it would get in a pod with the chart's memory limit
   * (productionHeapFlags) and the chart's node flags (OPERATOR_NODE_FLAGS); `nodeFlags` come after
   * them, so they can override them for an experiment (`--no-optimize-for-size`).
   */
  static async start(options: {
    kubeconfig: string;
    namespace: string;
    workers: number;
    nodeFlags?: readonly string[];
  }): Promise<OperatorUnderTest> {
    if (!existsSync(join(REPO, 'dist/src/main.js')))
      throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
    const dir = await mkdtemp(join(tmpdir(), 'eo-bench-memory-'));
    for (let attempt = 1; ; attempt++) {
      const port = await freeLoopbackPort();
      const probeFile = join(dir, 'heap-probe.json');
      const logFile = join(dir, `operator-${attempt}.log`);
      const args = [
        ...productionHeapFlags(),
        ...operatorNodeFlags(options.nodeFlags),
        '--expose-gc',
        '--import',
        PROBE,
        BIN,
        'run',
        '--kubeconfig',
        options.kubeconfig,
        '--namespaces',
        options.namespace,
        '--operator-namespace',
        options.namespace,
        '--project',
        'bench-{namespace}',
        '--location',
        'europe-west4',
        '--no-webhook',
        '--leader-elect=false',
        '--bind-address',
        '127.0.0.1',
        '--health-port',
        String(port),
        '--metrics-port',
        String(port),
        // The bench reads /metrics itself, on loopback: no token.
        '--metrics-auth=none',
        '--workers',
        String(options.workers),
      ];
      // The flags above are the whole configuration: settings in this shell's environment must not leak in.
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([k]) => !/^(EO_|POD_|KUBECONFIG$|NODE_OPTIONS$)/.test(k)),
      );
      const group = await ChildProcessGroup.start('endpoint-operator (bench)', process.execPath, args, logFile, {
        ...env,
        // The environment the chart gives the operator's container.
        ...Object.fromEntries(OPERATOR_MALLOC_ENV.map((e) => [e.name, e.value])),
        LOG_LEVEL: 'info',
        EO_BENCH_HEAP_PROBE_FILE: probeFile,
      });
      const watchdog = startWatchdog(process.pid, [group.pid], '');
      const proc = new OperatorUnderTest(group, watchdog, port, logFile, dir, probeFile);
      await new Promise((r) => setTimeout(r, 500));
      if (!group.running && attempt < 3 && isPortConflict(await readFile(logFile, 'utf8'))) {
        await watchdog.dismiss();
        continue;
      }
      return proc;
    }
  }

  get pid(): number {
    return this.group.pid;
  }

  /** Waits for /readyz (every informer listed and watching); returns the milliseconds waited. */
  async waitReady(timeoutMs: number): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < timeoutMs) {
      this.assertRunning();
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/readyz`, { signal: AbortSignal.timeout(5_000) });
        if (res.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`operator not ready within ${timeoutMs / 1000} s:\n${await this.logTail()}`);
  }

  procMemory(): ProcMemory {
    this.assertRunning();
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kib = (field: string): number => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
      if (!m?.[1]) throw new Error(`no ${field} in /proc/${this.pid}/status`);
      return Number(m[1]) * 1024;
    };
    return { rssBytes: kib('VmRSS'), peakRssBytes: kib('VmHWM') };
  }

  /** Unlabelled samples of /metrics by name (sums over label sets, e.g. workqueue_depth of every queue). */
  async metrics(names: readonly string[]): Promise<Record<string, number | undefined>> {
    this.assertRunning();
    const res = await fetch(`http://127.0.0.1:${this.port}/metrics`, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    const out: Record<string, number | undefined> = {};
    for (const line of text.split('\n')) {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)/.exec(line);
      if (!m?.[1] || !names.includes(m[1])) continue;
      out[m[1]] = (out[m[1]] ?? 0) + Number(m[3]);
    }
    return out;
  }

  /** Forces a full GC in the operator and returns the heap before and after it. */
  async probeHeap(timeoutMs = 30_000): Promise<HeapProbe> {
    this.assertRunning();
    if (!existsSync(this.probeFile))
      throw new Error('the heap probe is not installed in the operator process (SIGUSR2 would end it)');
    const want = ++this.probeSeq;
    process.kill(this.pid, 'SIGUSR2');
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      const got = JSON.parse(await readFile(this.probeFile, 'utf8')) as {
        seq: number;
        before?: NodeJS.MemoryUsage;
        after?: NodeJS.MemoryUsage;
        spacesBefore?: v8.HeapSpaceInfo[];
        spacesAfter?: v8.HeapSpaceInfo[];
      };
      if (got.seq >= want && got.before && got.after) {
        return {
          heapUsedBeforeBytes: got.before.heapUsed,
          heapUsedAfterBytes: got.after.heapUsed,
          rssAfterBytes: got.after.rss,
          spacesBefore: heapSpaces(got.spacesBefore),
          spacesAfter: heapSpaces(got.spacesAfter),
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the heap probe did not answer within ${timeoutMs / 1000} s`);
  }

  async logTail(lines = 40): Promise<string> {
    try {
      return (await readFile(this.logFile, 'utf8')).split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM (the operator drains and exits), SIGKILL after `graceMs`; keeps the log when asked. */
  async stop(options: { keepLog: boolean; graceMs?: number }): Promise<void> {
    await this.group.stop(options.graceMs ?? 20_000);
    signalGroup(this.group.pid, 'SIGKILL');
    await this.watchdog.dismiss();
    if (!options.keepLog) await rm(this.dir, { recursive: true, force: true });
  }

  private assertRunning(): void {
    if (!this.group.running)
      throw new Error(`the operator exited (${String(this.group.exitStatus)}); log: ${this.logFile}`);
  }
}
