/**
 * Per-thread CPU of a benchmark's processes, from /proc/<pid>/task/<tid>/schedstat (Linux): nanoseconds
 * on a CPU and nanoseconds runnable but waiting for one, per thread. On a shared 2-core machine the
 * second figure says whether a thread (the gateway's event loop above all) was held up by the CPU
 * being taken by others (the OS scheduler), which wall-clock latency alone cannot tell apart from
 * the thread's own work. Node 20 names all its threads "node", so the gateway's threads are told
 * apart by what is known of them: the main thread's id is the pid, the JSON workers run at nice 10
 * (json-worker.ts), the rest are V8's platform threads (GC, compiler) and libuv's pool.
 */
import { threadCpuOf, type ThreadCpu } from './process-cpu.js';

/** Thread id → its counters, for one process; empty when the process is gone. */
function threadsOf(pid: number): Map<number, ThreadCpu> {
  return new Map(threadCpuOf(pid).map((t) => [t.tid, t]));
}

export type Snapshot = ReadonlyMap<string, { readonly pid: number; readonly threads: Map<number, ThreadCpu> }>;

/** One sample of every named process. */
export function snapshot(processes: Readonly<Record<string, number | undefined>>): Snapshot {
  const out = new Map<string, { pid: number; threads: Map<number, ThreadCpu> }>();
  for (const [name, pid] of Object.entries(processes))
    if (pid !== undefined) out.set(name, { pid, threads: threadsOf(pid) });
  return out;
}

interface Share {
  /** CPU used, in cores (CPU seconds per second). */
  readonly cores: number;
  /** Time runnable but not running, summed over the threads, per second. */
  readonly waiting: number;
}

function share(
  before: Map<number, ThreadCpu>,
  after: Map<number, ThreadCpu>,
  seconds: number,
  pick: (tid: number, s: ThreadCpu) => boolean,
): Share {
  let run = 0;
  let wait = 0;
  for (const [tid, s] of after) {
    if (!pick(tid, s)) continue;
    const b = before.get(tid);
    run += s.ns - (b?.ns ?? 0);
    wait += s.waitNs - (b?.waitNs ?? 0);
  }
  return { cores: run / 1e9 / seconds, waiting: wait / 1e9 / seconds };
}

const fmt = (s: Share): string => `${s.cores.toFixed(2)} cores (waited ${(s.waiting * 1000).toFixed(0)} ms/s)`;

/**
 * The lines of a report between two snapshots `seconds` apart: each process's CPU and wait, and for
 * `threaded` (the gateway) its main thread, its nice-10 threads and the others apart.
 */
export function cpuReport(before: Snapshot, after: Snapshot, seconds: number, threaded: string): string[] {
  const lines: string[] = [];
  for (const [name, a] of after) {
    const b = before.get(name)?.threads ?? new Map<number, ThreadCpu>();
    lines.push(`  ${name}: ${fmt(share(b, a.threads, seconds, () => true))}`);
    if (name !== threaded) continue;
    lines.push(`    main thread: ${fmt(share(b, a.threads, seconds, (tid) => tid === a.pid))}`);
    lines.push(
      `    nice-10 threads (JSON workers): ${fmt(share(b, a.threads, seconds, (tid, s) => tid !== a.pid && s.nice > 0))}`,
    );
    lines.push(
      `    other threads (V8 GC and compiler, libuv): ${fmt(share(b, a.threads, seconds, (tid, s) => tid !== a.pid && s.nice <= 0))}`,
    );
    if (process.env['BENCH_THREADS'])
      for (const [tid, s] of a.threads)
        lines.push(`      ${tid} nice ${s.nice}: ${fmt(share(b, a.threads, seconds, (t) => t === tid))}`);
  }
  return lines;
}
