import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeThreadsCpu, nodeThreadsCpuDelta, threadCpuOf, type ThreadCpu } from '../../../bench/process-cpu.js';

/**
 * This thread's own CPU time in ms, from /proc/thread-self/stat (utime and stime, in 10 ms ticks): not the
 * process's, which counts its other threads too (the GC's, the thread pool's, busy with other files' work).
 */
function threadCpuMs(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // stat(5) fields 14 and 15
}

/** Busy for `ms` of this thread's CPU time (not the wall clock, which a loaded machine stretches). */
function spin(ms: number): void {
  const start = threadCpuMs();
  while (threadCpuMs() - start < ms);
}

describe('per-thread CPU from /proc schedstat', () => {
  it("puts this process's busy main thread under main, in ns that follow process.cpuUsage", () => {
    const before = nodeThreadsCpu(process.pid, threadCpuOf(process.pid));
    const usage = process.cpuUsage();
    spin(60);
    const used = process.cpuUsage(usage);
    const delta = nodeThreadsCpuDelta(before, nodeThreadsCpu(process.pid, threadCpuOf(process.pid)));
    // The busy loop ran on the main thread; cpuUsage (the whole process, µs) brackets it from outside.
    expect(delta.main).toBeGreaterThan(40e6);
    expect(delta.main / 1e3).toBeLessThanOrEqual(used.user + used.system + 20_000);
  });

  it("files Node's threads: main, the platform's start-up threads, then those started on demand", () => {
    const sample = (entries: [number, number][]): ThreadCpu[] =>
      entries.map(([tid, ns]) => ({ tid, ns, waitNs: 0, nice: 0 }));
    const threads = sample([
      [100, 5],
      [101, 1],
      [102, 2],
      [103, 3],
      [104, 4],
      [105, 5],
      [106, 6],
      [107, 70],
      [109, 90],
    ]);
    expect(nodeThreadsCpu(100, threads)).toEqual({ main: 5, v8: 21, later: 160, total: 186 });
    expect(nodeThreadsCpu(100, threads, 2)).toEqual({ main: 5, v8: 10, later: 171, total: 186 });
    const grown = sample([
      [100, 15],
      [101, 1],
      [102, 2],
      [103, 3],
      [104, 4],
      [105, 5],
      [106, 6],
      [107, 70],
      [109, 90],
      [110, 1],
    ]);
    expect(nodeThreadsCpuDelta(nodeThreadsCpu(100, threads), nodeThreadsCpu(100, grown))).toEqual({
      main: 10,
      v8: 0,
      later: 1,
      total: 11,
    });
  });

  it("charges a real worker thread's work to the later threads, not to main or V8's", async () => {
    // A Node child with 2 V8 pool threads whose worker_thread spins until it has had 150 ms of CPU (its own
    // schedstat, so a busy machine only makes it take longer), then stays alive (a thread that ends takes its CPU with it).
    const spin =
      'const fs = require("node:fs"); const ran = () => Number(fs.readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]); const e = ran() + 150e6; while (ran() < e); require("node:worker_threads").parentPort.postMessage(1); setInterval(() => {}, 1000);';
    const script = `
      const { Worker } = require('node:worker_threads');
      const w = new Worker(${JSON.stringify(spin)}, { eval: true });
      w.once('message', () => process.stdout.write('spun\\n'));
      setTimeout(() => process.exit(0), 20000);`;
    const child = spawn(process.execPath, ['--v8-pool-size=2', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => (d.toString().includes('spun') ? resolve() : undefined));
        child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
      });
      const cpu = nodeThreadsCpu(child.pid ?? 0, threadCpuOf(child.pid ?? 0), 2);
      expect(cpu.later).toBeGreaterThan(120e6);
      expect(cpu.main).toBeLessThan(cpu.later);
      expect(cpu.v8).toBeLessThan(cpu.later);
      expect(cpu.total).toBe(cpu.main + cpu.v8 + cpu.later);
    } finally {
      child.kill();
    }
  }, 30_000);
});
