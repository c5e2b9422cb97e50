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
      self: (usage.user + usage.system) / 1e6,
    };
  };
}

export function cpuDelta(before: CpuSample, after: CpuSample): CpuSample {
  return { apiserver: after.apiserver - before.apiserver, etcd: after.etcd - before.etcd, self: after.self - before.self };
}

export function formatCpu(d: CpuSample): string {
  return `CPU s: kube-apiserver ${d.apiserver.toFixed(1)}, etcd ${d.etcd.toFixed(1)}, this process ${d.self.toFixed(1)}`;
}

/**
 * Nanoseconds on CPU of each thread of a process, by thread id (/proc/<pid>/task/<tid>/schedstat,
 * first field): ns resolution, and per thread, so a Node process's main thread (tid = pid) is told
 * apart from libuv's pool (argon2, zlib, fs) and V8's GC helpers. Empty when the process is gone.
 */
export function threadCpuNanos(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // the thread ended while we looked
    }
  }
  return out;
}

/** CPU ms of each thread between two samples, busiest first; the main thread is named `main`. */
export function threadCpuDelta(pid: number, before: Map<number, number>, after: Map<number, number>): { thread: string; ms: number }[] {
  return [...after.entries()]
    .map(([tid, ns]) => ({ thread: tid === pid ? 'main' : String(tid), ms: (ns - (before.get(tid) ?? 0)) / 1e6 }))
    .filter((t) => t.ms >= 1)
    .sort((a, b) => b.ms - a.ms);
}
