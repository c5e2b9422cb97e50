/**
 * CPU seconds used by the control plane's processes and by this one, read from /proc (Linux).
 * Wall time on a shared 2-core machine moves with whatever else runs; CPU seconds per phase say
 * where the work went (apiserver, etcd, the operator's process) and stay comparable under load.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export interface CpuSample {
  readonly apiserver: number;
  readonly etcd: number;
  /** kube-controller-manager, kube-scheduler and kwok: they watch and act on what the phases write too. */
  readonly controllers: number;
  readonly self: number;
}

/** Pids whose command line mentions `marker` (the control plane's data dir) and `name`. */
function pidsOf(marker: string, name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline.some((a) => a.includes(marker)) && (cmdline[0] ?? '').endsWith(name)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** User + system CPU seconds of one process (10 ms resolution). */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** A sampler bound to one control plane (identified by its data dir). */
export function cpuSampler(dataDir: string): () => CpuSample {
  return () => {
    const usage = process.cpuUsage();
    return {
      apiserver: pidsOf(dataDir, 'kube-apiserver').reduce((s, p) => s + cpuSecondsOf(p), 0),
      etcd: pidsOf(dataDir, 'etcd').reduce((s, p) => s + cpuSecondsOf(p), 0),
      controllers: ['kube-controller-manager', 'kube-scheduler', 'kwok']
        .flatMap((name) => pidsOf(dataDir, name))
        .reduce((s, p) => s + cpuSecondsOf(p), 0),
      self: (usage.user + usage.system) / 1e6,
    };
  };
}

export function cpuDelta(before: CpuSample, after: CpuSample): CpuSample {
  return {
    apiserver: after.apiserver - before.apiserver,
    etcd: after.etcd - before.etcd,
    controllers: after.controllers - before.controllers,
    self: after.self - before.self,
  };
}

export function formatCpu(d: CpuSample): string {
  return `CPU s: kube-apiserver ${d.apiserver.toFixed(1)}, etcd ${d.etcd.toFixed(1)}, controllers ${d.controllers.toFixed(1)}, this process ${d.self.toFixed(1)}`;
}

/** One thread's time on CPU so far. */
export interface ThreadCpu {
  /** The main thread (the event loop) has tid = pid; Node 20 names none of its threads (`comm` is `node` for all). */
  readonly tid: number;
  /** Nanoseconds on a CPU (schedstat's first field, the scheduler's sum_exec_runtime). */
  readonly ns: number;
  /** Nanoseconds runnable but waiting for a CPU (schedstat's second field): time lost to other threads on a busy machine. */
  readonly waitNs: number;
  /** The thread's nice value (/proc/<pid>/task/<tid>/stat field 19): the gateway's JSON workers run at 10. */
  readonly nice: number;
}

/**
 * Time on CPU of every live thread of `pid`, in nanoseconds, from /proc/<pid>/task/<tid>/schedstat.
 * /proc/<pid>/stat counts in 10 ms ticks, ±10 µs per call over 1,000 calls, too coarse for a
 * difference of a few microseconds per call; and per thread, the event loop (the main thread) is told
 * apart from V8's GC and compiler helpers. A thread that ends between two samples takes its time with
 * it: compare processes whose threads live as long as the measurement (a server's do).
 */
export function threadCpuOf(pid: number): ThreadCpu[] {
  const threads: ThreadCpu[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const [run = '0', wait = '0'] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(' ');
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the parenthesised command name; nice is field 19.
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      threads.push({ tid: Number(tid), ns: Number(run), waitNs: Number(wait), nice });
    } catch {
      // the thread ended while we looked
    }
  }
  return threads;
}

/** CPU nanoseconds a process used between two threadCpuOf samples: all threads, and its main thread (the event loop) alone. */
export function threadCpuDelta(
  pid: number,
  before: readonly ThreadCpu[],
  after: readonly ThreadCpu[],
): { total: number; main: number } {
  const start = new Map(before.map((t) => [t.tid, t.ns]));
  let total = 0;
  let main = 0;
  for (const t of after) {
    const used = t.ns - (start.get(t.tid) ?? 0);
    total += used;
    if (t.tid === pid) main += used;
  }
  return { total, main };
}

/**
 * User-mode CPU seconds of one process (all threads; 10 ms ticks): the process's own code, without the
 * kernel's share. On loopback a write runs the receiver's TCP path and wakes it in the writer's system
 * time, which moves with where the other processes happen to be scheduled; summed over many blocks,
 * the ticks resolve a few µs per call.
 */
export function userCpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[11]) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU ns of a Node process by kind of thread; `total` is their sum. */
export interface NodeThreadsCpu {
  /** The event loop's thread: JavaScript, the main-thread parts of garbage collection, I/O syscalls. */
  readonly main: number;
  /** V8's platform threads: concurrent/parallel GC helpers and compilers, with the delayed-task and inspector-signal threads. */
  readonly v8: number;
  /** Threads started later: libuv's pool (fs, dns.lookup, crypto) and worker_threads. */
  readonly later: number;
  readonly total: number;
}

/**
 * `threadCpuOf` grouped the way Node 20 starts its threads (node.cc, node_platform.cc; Node 20 names
 * none of them, `comm` is `node` for all): the main thread (tid = pid), then at start-up
 * the inspector's signal thread, the platform's delayed-task thread and `--v8-pool-size` (default
 * 4) V8 workers, the lowest tids after the main one; every thread started after them comes later
 * and on demand. Tids are compared as numbers: a pid wrap-around during start-up would misfile them.
 */
export function nodeThreadsCpu(pid: number, threads: readonly ThreadCpu[], v8PoolSize = 4): NodeThreadsCpu {
  const others = threads
    .map((t) => t.tid)
    .filter((tid) => tid !== pid)
    .sort((a, b) => a - b);
  const platform = new Set(others.slice(0, 2 + v8PoolSize));
  let main = 0;
  let v8 = 0;
  let later = 0;
  for (const { tid, ns } of threads) {
    if (tid === pid) main += ns;
    else if (platform.has(tid)) v8 += ns;
    else later += ns;
  }
  return { main, v8, later, total: main + v8 + later };
}

/** `after - before` for each kind of thread. */
export function nodeThreadsCpuDelta(before: NodeThreadsCpu, after: NodeThreadsCpu): NodeThreadsCpu {
  return {
    main: after.main - before.main,
    v8: after.v8 - before.v8,
    later: after.later - before.later,
    total: after.total - before.total,
  };
}
