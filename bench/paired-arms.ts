/**
 * Arms of a benchmark (a server process and the call sent to it) compared in paired blocks: each block
 * sends the reference arm's calls and one other arm's calls interleaved (even calls to the reference,
 * odd ones to the other), each at the offered rate, open loop; each process's CPU is read per thread in
 * nanoseconds (process-cpu.ts) over the block. Both arms of a pair run at the same moments, so whatever
 * else the shared machine does (other benchmarks, builds, the kube-apiserver) falls on both alike;
 * arms measured in separate blocks, even adjacent ones, differed by tens of µs per call when the load
 * changed between blocks. The pairs rotate from block to block, and every block's difference is kept.
 * The figure is their mean (equal blocks: the CPU over all of them per call), because garbage
 * collection lands in whole pauses of milliseconds in one block of one process: a median of blocks
 * would leave out the collections a call's allocations cause. Its standard error (from the blocks'
 * spread) says how far to trust it, and an A/A pair (two processes running the same code) shows the floor.
 */
import { openLoop, pctOf } from './gateway-fixture.js';
import {
  nodeThreadsCpu,
  nodeThreadsCpuDelta,
  threadCpuDelta,
  threadCpuOf,
  userCpuSecondsOf,
  type NodeThreadsCpu,
} from './process-cpu.js';
import { shuffledOrder } from './seeded-random.js';

/** One call: [latency ms, HTTP status]. */
export type Sent = [number, number];

export interface Arm {
  readonly name: string;
  /** The server process whose CPU the arm's calls are charged: one process per arm. */
  readonly pid: number;
  readonly call: (i: number) => Promise<Sent>;
}

/** One arm against the reference, over the blocks they shared. */
export interface PairFigures {
  readonly arm: string;
  /** Latencies of the arm's and the reference's calls in these blocks, ms. */
  readonly latencies: number[];
  readonly referenceLatencies: number[];
  /** Per block: the arm's CPU per call minus the reference's, µs (all threads, and the main thread alone). */
  readonly blockCpuUs: number[];
  readonly blockMainUs: number[];
  /** The arm's and the reference's CPU per call over these blocks, µs. */
  readonly cpuUs: number;
  readonly referenceCpuUs: number;
  /** The arm's user-mode CPU per call minus the reference's over all these blocks, µs (ticks: only meaningful summed). */
  readonly userCpuUs: number;
}

/** The latencies of calls that all answered 200; throws naming the other statuses. */
export function ok(results: readonly Sent[], arm: string): number[] {
  const bad = results.filter(([, status]) => status !== 200);
  if (bad.length > 0)
    throw new Error(`${arm}: ${bad.length} calls answered ${[...new Set(bad.map(([, s]) => s))].join(', ')}`);
  return results.map(([ms]) => ms);
}

export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 === 1
    ? (sorted[Math.floor(mid)] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `perBlock` calls per arm per block, each arm at `rate`; stops starting blocks after `maxMs`. */
export async function comparePaired(
  reference: Arm,
  others: readonly Arm[],
  run: { perBlock: number; blocks: number; rate: number; maxMs: number },
): Promise<PairFigures[]> {
  const acc = others.map((arm) => ({
    arm,
    latencies: [] as number[],
    referenceLatencies: [] as number[],
    blockCpuUs: [] as number[],
    blockMainUs: [] as number[],
    ns: 0,
    referenceNs: 0,
    userS: 0,
    referenceUserS: 0,
  }));
  const t0 = performance.now();
  for (let b = 0; b < run.blocks && performance.now() - t0 < run.maxMs; b++) {
    for (let k = 0; k < acc.length; k++) {
      const pair = acc[(b + k) % acc.length] as (typeof acc)[number];
      const refBefore = threadCpuOf(reference.pid);
      const armBefore = threadCpuOf(pair.arm.pid);
      const [refUser, armUser] = [userCpuSecondsOf(reference.pid), userCpuSecondsOf(pair.arm.pid)];
      const sent = await openLoop(
        (i) => (i % 2 === 0 ? reference.call(i >> 1) : pair.arm.call(i >> 1)),
        2 * run.perBlock,
        2 * run.rate,
      );
      const ref = threadCpuDelta(reference.pid, refBefore, threadCpuOf(reference.pid));
      const arm = threadCpuDelta(pair.arm.pid, armBefore, threadCpuOf(pair.arm.pid));
      pair.referenceUserS += userCpuSecondsOf(reference.pid) - refUser;
      pair.userS += userCpuSecondsOf(pair.arm.pid) - armUser;
      pair.referenceLatencies.push(
        ...ok(
          sent.filter((_, i) => i % 2 === 0),
          reference.name,
        ),
      );
      pair.latencies.push(
        ...ok(
          sent.filter((_, i) => i % 2 === 1),
          pair.arm.name,
        ),
      );
      pair.blockCpuUs.push((arm.total - ref.total) / 1000 / run.perBlock);
      pair.blockMainUs.push((arm.main - ref.main) / 1000 / run.perBlock);
      pair.ns += arm.total;
      pair.referenceNs += ref.total;
    }
  }
  return acc.map((p) => ({
    arm: p.arm.name,
    latencies: p.latencies,
    referenceLatencies: p.referenceLatencies,
    blockCpuUs: p.blockCpuUs,
    blockMainUs: p.blockMainUs,
    cpuUs: p.ns / 1000 / Math.max(1, p.latencies.length),
    referenceCpuUs: p.referenceNs / 1000 / Math.max(1, p.referenceLatencies.length),
    userCpuUs: ((p.userS - p.referenceUserS) * 1e6) / Math.max(1, p.latencies.length),
  }));
}

/** The pair's difference, arm minus reference: CPU per call over all its blocks with its standard error, the blocks' median and range, and p50. */
export function pairDifference(p: PairFigures): {
  cpuUs: number;
  standardErrorUs: number;
  medianUs: number;
  mainUs: number;
  blockMinUs: number;
  blockMaxUs: number;
  p50Ms: number;
} {
  const n = p.blockCpuUs.length;
  const mean = p.blockCpuUs.reduce((s, x) => s + x, 0) / n;
  const variance = p.blockCpuUs.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, n - 1);
  return {
    cpuUs: mean,
    standardErrorUs: Math.sqrt(variance / n),
    medianUs: median(p.blockCpuUs),
    mainUs: p.blockMainUs.reduce((s, x) => s + x, 0) / n,
    blockMinUs: Math.min(...p.blockCpuUs),
    blockMaxUs: Math.max(...p.blockCpuUs),
    p50Ms: pctOf(p.latencies, 50) - pctOf(p.referenceLatencies, 50),
  };
}

/**
 * The figures of several rounds (each with fresh processes) as one: a process's own offset (its memory
 * layout, the cores it lands on; the A/A pair shows up to ~10 µs/call) is averaged over the rounds'
 * processes instead of deciding the figure.
 */
export function mergeRounds(rounds: readonly (readonly PairFigures[])[]): PairFigures[] {
  const first = rounds[0] ?? [];
  return first.map((p) => {
    const all = rounds.map((r) => r.find((x) => x.arm === p.arm) as PairFigures);
    const calls = all.reduce((s, x) => s + x.latencies.length, 0);
    const weighted = (f: (x: PairFigures) => number): number =>
      all.reduce((s, x) => s + f(x) * x.latencies.length, 0) / Math.max(1, calls);
    return {
      arm: p.arm,
      latencies: all.flatMap((x) => x.latencies),
      referenceLatencies: all.flatMap((x) => x.referenceLatencies),
      blockCpuUs: all.flatMap((x) => x.blockCpuUs),
      blockMainUs: all.flatMap((x) => x.blockMainUs),
      cpuUs: weighted((x) => x.cpuUs),
      referenceCpuUs: weighted((x) => x.referenceCpuUs),
      userCpuUs: weighted((x) => x.userCpuUs),
    };
  });
}

/** One arm's figures from everyArmBlocks: per block, CPU per call by kind of thread (µs), and its calls' latencies (ms). */
export interface ArmBlocks {
  readonly arm: string;
  readonly blocks: NodeThreadsCpu[];
  readonly latencies: number[];
}

/**
 * Every arm called in every block: each cycle sends one call to each arm, in a fresh random order, at
 * `rate` cycles a second (open loop), so all arms share each moment of the machine's load. Each
 * process's CPU is read at the blocks' boundaries and nowhere else, so the blocks tile its time: work a
 * process does later than the calls that caused it (a batch exporter's timer, a GC) lands in some block
 * of its own, and the mean over the blocks charges all of it. Stops starting blocks after `maxMs`.
 */
export async function everyArmBlocks(
  arms: readonly Arm[],
  run: { perBlock: number; blocks: number; rate: number; maxMs: number },
  random: () => number = Math.random,
): Promise<ArmBlocks[]> {
  const out = arms.map((a) => ({ arm: a.name, blocks: [] as NodeThreadsCpu[], latencies: [] as number[] }));
  const cpuOf = (a: Arm): NodeThreadsCpu => nodeThreadsCpu(a.pid, threadCpuOf(a.pid));
  let before = arms.map(cpuOf);
  const t0 = performance.now();
  for (let b = 0; b < run.blocks && performance.now() - t0 < run.maxMs; b++) {
    const k = arms.length;
    let order: number[] = [];
    const sent = await openLoop(
      (i) => {
        if (i % k === 0) order = shuffledOrder(k, random);
        const arm = order[i % k] as number;
        return (arms[arm] as Arm).call(i).then((r): [number, Sent] => [arm, r]);
      },
      k * run.perBlock,
      k * run.rate,
    );
    const after = arms.map(cpuOf);
    arms.forEach((arm, a) => {
      const mine = sent.filter(([i]) => i === a).map(([, r]) => r);
      const used = nodeThreadsCpuDelta(before[a] as NodeThreadsCpu, after[a] as NodeThreadsCpu);
      const perCall = (ns: number): number => ns / 1000 / mine.length;
      (out[a] as ArmBlocks).blocks.push({
        main: perCall(used.main),
        v8: perCall(used.v8),
        later: perCall(used.later),
        total: perCall(used.total),
      });
      (out[a] as ArmBlocks).latencies.push(...ok(mine, arm.name));
    });
    before = after;
  }
  return out;
}
