import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  activeEntries,
  SmoothWeightedRoundRobin,
  splitSignature,
  stickyPick,
  TrafficSplitter,
  type SplitEntry,
} from '../../../src/gateway/traffic-split.js';

/** Integer weights summing to 100 over 1..6 ids (some may be 0), as a valid trafficSplit. */
const splits = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc.array(fc.integer({ min: 0, max: 100 }), { minLength: n, maxLength: n }).map((raw) => {
    const total = raw.reduce((a, b) => a + b, 0) || 1;
    const weights = raw.map((w) => Math.floor((w * 100) / total));
    weights[0] = (weights[0] ?? 0) + 100 - weights.reduce((a, b) => a + b, 0);
    return Object.fromEntries(weights.map((w, i) => [String(1000 + i), w]));
  }),
);

describe('SmoothWeightedRoundRobin', () => {
  it('gives each id its exact percentage in every window of 100 consecutive picks (so within ±1)', () => {
    fc.assert(
      fc.property(splits, fc.integer({ min: 0, max: 300 }), (split, offset) => {
        const entries = activeEntries(split);
        const rr = new SmoothWeightedRoundRobin(entries);
        const picks = Array.from({ length: offset + 400 }, () => rr.next());
        for (let start = offset; start + 100 <= picks.length; start += 37) {
          const counts = new Map<string, number>();
          for (const id of picks.slice(start, start + 100)) counts.set(id ?? '', (counts.get(id ?? '') ?? 0) + 1);
          for (const [id, weight] of Object.entries(split))
            expect(Math.abs((counts.get(id) ?? 0) - weight)).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('never picks an id absent from the split or with weight 0', () => {
    const rr = new SmoothWeightedRoundRobin(activeEntries({ '1': 70, '2': 30, '3': 0 }));
    const seen = new Set(Array.from({ length: 1000 }, () => rr.next()));
    expect([...seen].sort()).toEqual(['1', '2']);
  });

  it('interleaves rather than bursting: 70/30 never sends more than 3 in a row to one model', () => {
    const rr = new SmoothWeightedRoundRobin(activeEntries({ '1': 70, '2': 30 }));
    const seq = Array.from({ length: 200 }, () => rr.next()).join('');
    expect(seq).not.toMatch(/1111|22/);
  });

  it('an empty split picks nothing', () => {
    expect(new SmoothWeightedRoundRobin([]).next()).toBeUndefined();
  });
});

describe('activeEntries', () => {
  it('keeps positive integer weights in id order and drops the rest', () => {
    expect(activeEntries({ '9': 20, '1': 80, '5': 0, x: 'ten' })).toEqual([
      ['1', 80],
      ['9', 20],
    ]);
    expect(splitSignature(activeEntries({ '9': 20, '1': 80 }))).toBe('1=80,9=20');
  });
});

describe('sticky keys', () => {
  const entries: SplitEntry[] = [
    ['1', 70],
    ['2', 30],
  ];

  it('pin a key to the same model on every call and every replica while the split is unchanged', () => {
    const a = new TrafficSplitter();
    const b = new TrafficSplitter();
    for (let k = 0; k < 200; k++) {
      const key = `user-${k}`;
      const first = a.pick('e', entries, '1=70,2=30', key);
      for (let i = 0; i < 5; i++) expect(a.pick('e', entries, '1=70,2=30', key)).toBe(first);
      expect(b.pick('e', entries, '1=70,2=30', key)).toBe(first);
    }
  });

  it('spread keys over the models roughly by the split', () => {
    let ones = 0;
    for (let k = 0; k < 10_000; k++) if (stickyPick(entries, `session-${k}`) === '1') ones++;
    expect(ones / 10_000).toBeGreaterThan(0.66);
    expect(ones / 10_000).toBeLessThan(0.74);
  });

  it('do not advance the round-robin: unpinned calls keep their exact proportions', () => {
    const s = new TrafficSplitter();
    const unpinned: string[] = [];
    for (let i = 0; i < 100; i++) {
      s.pick('e', entries, 'sig', `k${i}`);
      unpinned.push(s.pick('e', entries, 'sig') ?? '');
    }
    expect(unpinned.filter((x) => x === '1')).toHaveLength(70);
  });

  it('move when the split changes, since the ranges change', () => {
    const moved = Array.from({ length: 1000 }, (_, k) => `k${k}`).filter(
      (key) =>
        stickyPick(entries, key) !==
        stickyPick(
          [
            ['1', 10],
            ['2', 90],
          ],
          key,
        ),
    );
    expect(moved.length).toBeGreaterThan(0);
  });
});

describe('TrafficSplitter', () => {
  it('restarts the round-robin when the split signature changes', () => {
    const s = new TrafficSplitter();
    const before = Array.from({ length: 100 }, () =>
      s.pick(
        'e',
        [
          ['1', 50],
          ['2', 50],
        ],
        'a',
      ),
    );
    expect(before.filter((x) => x === '1')).toHaveLength(50);
    const after = Array.from({ length: 100 }, () =>
      s.pick(
        'e',
        [
          ['1', 10],
          ['2', 90],
        ],
        'b',
      ),
    );
    expect(after.filter((x) => x === '1')).toHaveLength(10);
  });
});
