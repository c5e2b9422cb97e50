import { describe, expect, it } from 'vitest';
import { blocksByRound, meanInterval, resampleRoundsThenBlocks } from '../../../bench/bootstrap.js';
import { seededRandom as seeded } from '../../../bench/seeded-random.js';

describe('resampleRoundsThenBlocks', () => {
  it("draws as many rounds as there are, and within a drawn round only that round's blocks, as many as it has", () => {
    const roundOfBlock = [0, 0, 0, 1, 1, 1, 2, 2, 2];
    expect(blocksByRound(roundOfBlock)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7, 8],
    ]);
    const random = seeded(3);
    for (let s = 0; s < 100; s++) {
      const picks = resampleRoundsThenBlocks(roundOfBlock, random);
      expect(picks).toHaveLength(9);
      for (let r = 0; r < 3; r++) {
        const rounds = new Set(picks.slice(r * 3, r * 3 + 3).map((i) => roundOfBlock[i]));
        expect(rounds.size).toBe(1);
      }
    }
  });
});

describe('meanInterval', () => {
  it("is the blocks' mean, with an interval as wide as the rounds' offsets, not the blocks' tiny spread", () => {
    // Five rounds (processes) whose offsets are -10..+10 µs; blocks within a round differ by ±0.1 µs.
    const offsets = [-10, -5, 0, 5, 10];
    const random = seeded(7);
    const values: number[] = [];
    const roundOfBlock: number[] = [];
    offsets.forEach((o, r) => {
      for (let b = 0; b < 20; b++) {
        values.push(3 + o + (random() - 0.5) * 0.2);
        roundOfBlock.push(r);
      }
    });
    const i = meanInterval(values, roundOfBlock, { random: seeded(11) });
    expect(i.mean).toBeCloseTo(3, 1);
    expect(i.perRound.map((x) => Math.round(x))).toEqual([-7, -2, 3, 8, 13]);
    expect(i.low95).toBeLessThan(-1);
    expect(i.high95).toBeGreaterThan(7);
    // The blocks alone (one round) would give an interval of a few tenths of a µs.
    const one = meanInterval(values.slice(0, 20), roundOfBlock.slice(0, 20), { random: seeded(11) });
    expect(one.high95 - one.low95).toBeLessThan(0.2);
  });

  it('refuses values without a round label each', () => {
    expect(() => meanInterval([1, 2], [0])).toThrow(/one round label per value/);
  });
});
