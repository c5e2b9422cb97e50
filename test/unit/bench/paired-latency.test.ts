import { describe, expect, it } from 'vitest';
import { addedP50, interleavedLatencies, mergeLatencyRounds } from '../../../bench/paired-latency.js';
import type { Arm, Sent } from '../../../bench/paired-arms.js';
import { seededRandom as seeded, shuffledOrder } from '../../../bench/seeded-random.js';

/** `blocks` blocks of `perBlock` latencies around `centreMs`, each block shifted by its own drift (the machine's load of the moment). */
function blocksAround(centreMs: number, drift: readonly number[], perBlock: number, random: () => number): number[][] {
  return drift.map((d) => Array.from({ length: perBlock }, () => centreMs + d + (random() - 0.5) * 0.2));
}

describe('shuffledOrder', () => {
  it('is a permutation, and every position is taken by every item over many draws', () => {
    const random = seeded(1);
    const firsts = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const order = shuffledOrder(4, random);
      expect([...order].sort()).toEqual([0, 1, 2, 3]);
      firsts.add(order[0] as number);
    }
    expect(firsts).toEqual(new Set([0, 1, 2, 3]));
  });
});

describe('interleavedLatencies', () => {
  it('calls every arm once per cycle, one call in flight at a time, and keeps each block apart', async () => {
    let inFlight = 0;
    let most = 0;
    const calls: string[] = [];
    const arm = (name: string, ms: number): Arm => ({
      name,
      pid: 0,
      call: async (): Promise<Sent> => {
        inFlight++;
        most = Math.max(most, inFlight);
        calls.push(name);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return [ms, 200];
      },
    });
    const out = await interleavedLatencies(
      [arm('a', 1), arm('b', 2), arm('c', 3)],
      { perBlock: 5, blocks: 4, maxMs: 60_000 },
      seeded(2),
    );
    expect(most).toBe(1);
    for (let cycle = 0; cycle < 20; cycle++)
      expect(calls.slice(cycle * 3, cycle * 3 + 3).sort()).toEqual(['a', 'b', 'c']);
    expect(out.get('b')).toEqual(Array.from({ length: 4 }, () => [2, 2, 2, 2, 2]));
  });

  it('names the arm and the statuses when a call does not answer 200', async () => {
    const arms: Arm[] = [
      { name: 'good', pid: 0, call: async () => [1, 200] },
      { name: 'refusing', pid: 0, call: async () => [1, 403] },
    ];
    await expect(interleavedLatencies(arms, { perBlock: 2, blocks: 1, maxMs: 60_000 })).rejects.toThrow(
      'refusing: 2 calls answered 403',
    );
  });
});

describe('addedP50', () => {
  const drift = [0, 0.05, -0.03, 0.2, 0.01, -0.02, 0.08, 0, 0.04, -0.05, 0.03, 0.1];

  it('finds a 0.010 ms shift under block drift of ±0.2 ms, with an interval that holds it and is narrower than the goal', () => {
    const random = seeded(3);
    const reference = blocksAround(0.65, drift, 800, random);
    const arm = blocksAround(0.66, drift, 800, random);
    const rounds = drift.map((_, i) => Math.floor(i / 4));
    const r = addedP50(arm, reference, rounds, { resamples: 300, random });
    expect(r.addedMs).toBeGreaterThan(0.005);
    expect(r.addedMs).toBeLessThan(0.015);
    expect(r.low95Ms).toBeLessThan(0.01);
    expect(r.high95Ms).toBeGreaterThan(0.01);
    expect(r.high95Ms - r.low95Ms).toBeLessThan(0.02);
    expect(r.perRoundMs).toHaveLength(3);
    expect(r.calls).toBe(drift.length * 800);
  });

  it('reads an A/A pair (same distribution) as an interval around zero', () => {
    const random = seeded(4);
    const reference = blocksAround(0.65, drift, 500, random);
    const twin = blocksAround(0.65, drift, 500, random);
    const r = addedP50(
      twin,
      reference,
      drift.map(() => 0),
      { resamples: 300, random },
    );
    expect(r.low95Ms).toBeLessThan(0);
    expect(r.high95Ms).toBeGreaterThan(0);
  });

  it("widens the interval to the rounds' spread when each round's process carries its own offset", () => {
    const random = seeded(5);
    const rounds = drift.map((_, i) => Math.floor(i / 4));
    const offsetOfRound = [0.02, 0, -0.02];
    const reference = blocksAround(0.65, drift, 500, random);
    const arm = blocksAround(0.65, drift, 500, random).map((block, i) =>
      block.map((ms) => ms + (offsetOfRound[rounds[i] as number] as number)),
    );
    const r = addedP50(arm, reference, rounds, { resamples: 300, random });
    expect(r.perRoundMs.map((x) => Math.round(x * 100) / 100)).toEqual([0.02, 0, -0.02]);
    expect(r.low95Ms).toBeLessThan(-0.01);
    expect(r.high95Ms).toBeGreaterThan(0.01);
  });

  it('refuses blocks that do not pair up', () => {
    expect(() => addedP50([[1]], [[1], [2]], [0])).toThrow('one entry per block');
  });
});

describe('mergeLatencyRounds', () => {
  it("concatenates each arm's blocks and labels every block with its round", () => {
    const merged = mergeLatencyRounds([
      new Map([
        ['a', [[1], [2]]],
        ['b', [[3], [4]]],
      ]),
      new Map([
        ['a', [[5]]],
        ['b', [[6]]],
      ]),
    ]);
    expect(merged.blocks.get('a')).toEqual([[1], [2], [5]]);
    expect(merged.blocks.get('b')).toEqual([[3], [4], [6]]);
    expect(merged.roundOfBlock).toEqual([0, 0, 1]);
  });
});
