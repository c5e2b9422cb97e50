/**
 * Arms of a benchmark (a gateway process and the call sent to it) called in alternating open-loop
 * blocks at one offered rate, each arm's CPU read per thread in nanoseconds (process-cpu.ts) over its
 * own blocks only. The order of the arms rotates from block to block, so that no arm always runs
 * first after a pause or right after a given other one; and each block's figure is kept, so the spread
 * between blocks (and between two processes running the same code, an A/A pair) shows how much of a
 * difference between arms is noise.
 */
import { pctOf } from './gateway-fixture.js';
import { threadCpuDelta, threadCpuOf } from './process-cpu.js';

/** One call: [latency ms, HTTP status]. */
export type Sent = [number, number];

export interface Arm {
  readonly name: string;
  /** The server process whose CPU the arm's calls are charged. */
  readonly pid: number;
  readonly call: (i: number) => Promise<Sent>;
}

export interface ArmFigures {
  readonly latencies: number[];
  /** All threads' CPU per call, µs, per block. */
  readonly blockCpuUs: number[];
  /** All threads' CPU per call over every block, µs. */
  cpuUs: number;
  /** The main thread's (event loop's) CPU per call, µs. */
  mainUs: number;
}

/** Open loop: call i is sent at start + i/rate whatever the answers do. */
export async function openLoop(call: (i: number) => Promise<Sent>, count: number, rate: number): Promise<Sent[]> {
  const interval = 1000 / rate;
  const t0 = performance.now();
  const pending: Promise<Sent>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = t0 + i * interval - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(call(i));
  }
  return Promise.all(pending);
}

/** The latencies of calls that all answered 200; throws naming the other statuses. */
export function ok(results: readonly Sent[], arm: string): number[] {
  const bad = results.filter(([, status]) => status !== 200);
  if (bad.length > 0) throw new Error(`${arm}: ${bad.length} calls answered ${[...new Set(bad.map(([, s]) => s))].join(', ')}`);
  return results.map(([ms]) => ms);
}

export async function compareArms(arms: readonly Arm[], run: { perBlock: number; blocks: number; rate: number; maxMs: number }): Promise<Map<string, ArmFigures>> {
  const figures = new Map(arms.map((a) => [a.name, { latencies: [] as number[], blockCpuUs: [] as number[], cpuUs: 0, mainUs: 0 }]));
  const totals = new Map(arms.map((a) => [a.name, { ns: 0, mainNs: 0 }]));
  const t0 = performance.now();
  for (let b = 0; b < run.blocks && performance.now() - t0 < run.maxMs; b++) {
    for (let k = 0; k < arms.length; k++) {
      const arm = arms[(b + k) % arms.length] as Arm;
      const before = threadCpuOf(arm.pid);
      const latencies = ok(await openLoop(arm.call, run.perBlock, run.rate), arm.name);
      const used = threadCpuDelta(arm.pid, before, threadCpuOf(arm.pid));
      const f = figures.get(arm.name) as ArmFigures;
      const t = totals.get(arm.name) as { ns: number; mainNs: number };
      f.latencies.push(...latencies);
      f.blockCpuUs.push(used.total / 1000 / latencies.length);
      t.ns += used.total;
      t.mainNs += used.main;
    }
  }
  for (const [name, f] of figures) {
    const t = totals.get(name) as { ns: number; mainNs: number };
    f.cpuUs = t.ns / 1000 / f.latencies.length;
    f.mainUs = t.mainNs / 1000 / f.latencies.length;
  }
  return figures;
}

/** `b` minus `a`: CPU per call over all blocks, its per-block range, and the p50 difference. */
export function armDifference(a: ArmFigures, b: ArmFigures): { cpuUs: number; mainUs: number; blockMinUs: number; blockMaxUs: number; p50Ms: number } {
  const perBlock = b.blockCpuUs.map((x, i) => x - (a.blockCpuUs[i] ?? NaN));
  return {
    cpuUs: b.cpuUs - a.cpuUs,
    mainUs: b.mainUs - a.mainUs,
    blockMinUs: Math.min(...perBlock),
    blockMaxUs: Math.max(...perBlock),
    p50Ms: pctOf(b.latencies, 50) - pctOf(a.latencies, 50),
  };
}
