/**
 * Two-level bootstrap for benchmarks run in rounds of fresh processes, each round in blocks: draw as
 * many rounds as there are, with replacement, then each drawn round's blocks with replacement. A
 * process carries an offset of its own (memory layout, JIT decisions, the cores it lands on) that no
 * number of blocks from it averages away, so an interval from the blocks alone is far too narrow; only
 * the rounds' spread says how far another set of processes could land.
 */
import { pctOf } from './gateway-fixture.js';

/** One resample's block indices (a block can come more than once); `roundOfBlock[i]` is block i's round. */
export function resampleRoundsThenBlocks(
  roundOfBlock: readonly number[],
  random: () => number = Math.random,
): number[] {
  const blocksOf = blocksByRound(roundOfBlock);
  return blocksOf.flatMap(() => {
    const ids = blocksOf[Math.floor(random() * blocksOf.length)] as number[];
    return ids.map(() => ids[Math.floor(random() * ids.length)] as number);
  });
}

/** Block indices grouped by round, in the order rounds first appear. */
export function blocksByRound(roundOfBlock: readonly number[]): number[][] {
  const rounds = [...new Set(roundOfBlock)];
  return rounds.map((r) => roundOfBlock.flatMap((x, i) => (x === r ? [i] : [])));
}

export interface MeanInterval {
  readonly mean: number;
  /** 2.5th and 97.5th percentiles of the resampled means. */
  readonly low95: number;
  readonly high95: number;
  /** The mean of each round's blocks alone. */
  readonly perRound: number[];
}

/** The mean of per-block values (e.g. CPU per call, arm minus reference, of each block) with its two-level bootstrap interval. */
export function meanInterval(
  values: readonly number[],
  roundOfBlock: readonly number[],
  options: { resamples?: number; random?: () => number } = {},
): MeanInterval {
  const { resamples = 2000, random = Math.random } = options;
  if (values.length !== roundOfBlock.length || values.length === 0)
    throw new Error('meanInterval: one round label per value, at least one value');
  const meanOf = (ids: readonly number[]): number => ids.reduce((s, i) => s + (values[i] as number), 0) / ids.length;
  const means: number[] = [];
  for (let s = 0; s < resamples; s++) means.push(meanOf(resampleRoundsThenBlocks(roundOfBlock, random)));
  return {
    mean: meanOf(values.map((_, i) => i)),
    low95: pctOf(means, 2.5),
    high95: pctOf(means, 97.5),
    perRound: blocksByRound(roundOfBlock).map(meanOf),
  };
}
