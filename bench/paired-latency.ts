/**
 * Added median latency of server processes (arms) against a reference process, precise enough for
 * differences of ~0.01 ms on a shared 2-core machine. What made the paired open-loop blocks
 * (paired-arms.ts) move by ±0.03 ms between runs, and what is done instead:
 * - Calls of both arms in flight at once share the one model server and the two cores: the later one
 *   queues behind the other, and which is later depended on the timer's bursts. Here ONE call is in
 *   flight at a time (no call queues behind another of the benchmark's), and the arms' calls are
 *   interleaved call by call in a fresh random order each cycle, so no arm is systematically first,
 *   and whatever else the machine does at a moment lands on every arm alike. The machine is never
 *   saturated by the benchmark itself (one call's chain runs at a time).
 * - Latency is the client's wall time per call from process.hrtime (ns), kept as measured: no histogram
 *   buckets to round to. The figure is the p50 of each arm over all its calls, minus the reference's.
 * - Its uncertainty is a two-level bootstrap: rounds of fresh processes drawn with replacement, then
 *   blocks within each drawn round. A block's calls share a stretch of the machine's history (calls are
 *   not independent, blocks nearly are), and a process carries an offset of its own that no number of
 *   calls to it averages away (the A/A pair's rounds differ by several µs): only more processes do,
 *   so the interval must include the rounds' spread. The A/A arm (a second process running the reference's code) shows what two processes
 *   differ by with the same code, the floor any difference must be read against.
 * Closed loop has no coordinated omission to hide here: a median at a load that never queues is the
 * service time, and every call that was sent is counted.
 */
import { blocksByRound, resampleRoundsThenBlocks } from './bootstrap.js';
import { pctOf } from './gateway-fixture.js';
import { ok, type Arm } from './paired-arms.js';
import { shuffledOrder } from './seeded-random.js';

/** Per arm, the latencies (ms) of its calls, one array per block. */
export type BlockLatencies = Map<string, number[][]>;

/**
 * `perBlock` cycles per block; each cycle calls every arm once, one call at a time, in a random order.
 * Stops starting blocks after `maxMs`. Throws if any call answered other than 200.
 */
export async function interleavedLatencies(
  arms: readonly Arm[],
  run: { perBlock: number; blocks: number; maxMs: number },
  random: () => number = Math.random,
): Promise<BlockLatencies> {
  const out: BlockLatencies = new Map(arms.map((a) => [a.name, []]));
  const t0 = performance.now();
  let call = 0;
  for (let b = 0; b < run.blocks && performance.now() - t0 < run.maxMs; b++) {
    const block = arms.map(() => [] as [number, number][]);
    for (let c = 0; c < run.perBlock; c++, call++) {
      for (const k of shuffledOrder(arms.length, random))
        (block[k] as [number, number][]).push(await (arms[k] as Arm).call(call));
    }
    arms.forEach((arm, k) => out.get(arm.name)?.push(ok(block[k] as [number, number][], arm.name)));
  }
  return out;
}

/** Rounds of fresh processes as one: each arm's blocks, labelled with their round (the bootstrap's first level). */
export function mergeLatencyRounds(rounds: readonly BlockLatencies[]): {
  blocks: BlockLatencies;
  roundOfBlock: number[];
} {
  const blocks: BlockLatencies = new Map();
  const roundOfBlock: number[] = [];
  rounds.forEach((round, r) => {
    for (const [name, bs] of round) blocks.set(name, [...(blocks.get(name) ?? []), ...bs]);
    const count = [...round.values()][0]?.length ?? 0;
    for (let i = 0; i < count; i++) roundOfBlock.push(r);
  });
  return { blocks, roundOfBlock };
}

export interface AddedP50 {
  /** p50 of the arm's calls minus the reference's, ms. */
  readonly addedMs: number;
  /** 95 % bootstrap interval of addedMs (2.5th and 97.5th percentiles of the resampled differences; rounds, then blocks), ms. */
  readonly low95Ms: number;
  readonly high95Ms: number;
  /** The difference in each round alone (fresh processes each round), ms. */
  readonly perRoundMs: number[];
  readonly p50Ms: number;
  readonly referenceP50Ms: number;
  readonly calls: number;
}

/** The p50 (pctOf's rank) of the picked blocks' calls pooled; a typed array's native sort keeps 1,000 resamples of ~10^4 calls to seconds. */
function p50Of(blocks: readonly (readonly number[])[], picks: readonly number[]): number {
  let n = 0;
  for (const i of picks) n += blocks[i]?.length ?? 0;
  const all = new Float64Array(n);
  let at = 0;
  for (const i of picks) {
    const block = blocks[i] ?? [];
    all.set(block, at);
    at += block.length;
  }
  all.sort();
  return all[Math.min(n - 1, Math.floor(0.5 * n))] ?? NaN;
}

/**
 * The arm's added p50 over the reference's, from blocks sent side by side (block i of both ran in the same
 * stretch of time), with a bootstrap interval: `resamples` times, draw as many rounds as there are with
 * replacement, then each drawn round's blocks with replacement (the same draw for both arms, keeping
 * their pairing), and take the difference of the pooled p50s.
 */
export function addedP50(
  arm: readonly (readonly number[])[],
  reference: readonly (readonly number[])[],
  roundOfBlock: readonly number[],
  options: { resamples?: number; random?: () => number } = {},
): AddedP50 {
  const { resamples = 1000, random = Math.random } = options;
  if (arm.length !== reference.length || arm.length !== roundOfBlock.length)
    throw new Error('addedP50: the arm, the reference and the round labels must have one entry per block');
  const blocksOf = blocksByRound(roundOfBlock);
  const everyBlock = roundOfBlock.map((_, i) => i);
  const differences: number[] = [];
  for (let s = 0; s < resamples; s++) {
    const picks = resampleRoundsThenBlocks(roundOfBlock, random);
    differences.push(p50Of(arm, picks) - p50Of(reference, picks));
  }
  const p50Ms = p50Of(arm, everyBlock);
  const referenceP50Ms = p50Of(reference, everyBlock);
  return {
    addedMs: p50Ms - referenceP50Ms,
    low95Ms: pctOf(differences, 2.5),
    high95Ms: pctOf(differences, 97.5),
    perRoundMs: blocksOf.map((ids) => p50Of(arm, ids) - p50Of(reference, ids)),
    p50Ms,
    referenceP50Ms,
    calls: arm.reduce((s, b) => s + b.length, 0),
  };
}
