import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { judgeTrend, leastSquares, windowFloors, type Point } from '../../../bench/memory/trend.js';
import { judged, meetsGoal, readFragment, recordResults } from '../../../bench/results.js';

describe('bench results', () => {
  const dirs: string[] = [];
  afterEach(() => {
    delete process.env['BENCH_RESULT_FILE'];
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('judges goals in both directions and never passes a non-finite value', () => {
    expect(meetsGoal(150, { op: '<=', value: 150 })).toBe(true);
    expect(meetsGoal(150.1, { op: '<=', value: 150 })).toBe(false);
    expect(meetsGoal(49_999, { op: '>=', value: 50_000 })).toBe(false);
    expect(meetsGoal(0, { op: '==', value: 0 })).toBe(true);
    expect(meetsGoal(NaN, { op: '>=', value: 0 })).toBe(false);
    expect(judged({ id: 'x', name: 'x', value: 1, unit: 's' }).pass).toBeUndefined();
    // A verdict the bench reached itself (a criterion of several figures) is kept.
    expect(judged({ id: 'x', name: 'x', value: 1, unit: 's', goal: { op: '<=', value: 2 }, pass: false }).pass).toBe(
      false,
    );
  });

  it('merges the entries of successive calls into the fragment, replacing an id recorded again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eo-bench-results-'));
    dirs.push(dir);
    const file = join(dir, 'fragment.json');
    process.env['BENCH_RESULT_FILE'] = file;
    recordResults([{ id: 'B3.rss', name: 'rss', value: 200, unit: 'MB', goal: { op: '<=', value: 150 } }], {
      phase: 1,
    });
    recordResults(
      [
        { id: 'B3.rss', name: 'rss', value: 120, unit: 'MB', goal: { op: '<=', value: 150 } },
        { id: 'B3.other', name: 'o', value: 1, unit: 's' },
      ],
      { samples: [1, 2] },
    );
    const fragment = readFragment(file);
    expect(fragment?.entries.map((e) => [e.id, e.value, e.pass])).toEqual([
      ['B3.rss', 120, true],
      ['B3.other', 1, undefined],
    ]);
    expect(fragment?.details).toEqual({ phase: 1, samples: [1, 2] });
    expect(() => JSON.parse(readFileSync(file, 'utf8')) as unknown).not.toThrow();
  });

  it('records nothing when no runner asked for a file', () => {
    expect(() => recordResults([{ id: 'x', name: 'x', value: 1, unit: 's' }])).not.toThrow();
  });
});

describe('heap trend', () => {
  const line = (slopePerSecond: number, start: number, noise: (i: number) => number = () => 0): Point[] =>
    Array.from({ length: 20 }, (_, i) => ({
      t: 30 * (i + 1),
      bytes: start + slopePerSecond * 30 * (i + 1) + noise(i),
    }));

  it('recovers slope and intercept of a noiseless line', () => {
    const fit = leastSquares(line(1000, 60e6));
    expect(fit.slope).toBeCloseTo(1000, 6);
    expect(fit.intercept).toBeCloseTo(60e6, 0);
    expect(fit.residualStd).toBeCloseTo(0, 3);
  });

  it('passes a flat series with noise well above a leak of a few hundred bytes per second', () => {
    const verdict = judgeTrend(
      line(0, 60e6, (i) => (i % 2 === 0 ? 1e6 : -1e6)),
      600,
    );
    expect(verdict.pass).toBe(true);
    expect(Math.abs(verdict.projectedGrowthBytes)).toBeLessThan(1e6);
    expect(verdict.thresholdBytes).toBe(2e6);
  });

  it('fails a series that grows 5 MB over the run even when each step hides in the noise', () => {
    const verdict = judgeTrend(
      line(5e6 / 600, 60e6, (i) => (i % 2 === 0 ? 0.5e6 : -0.5e6)),
      600,
    );
    expect(verdict.pass).toBe(false);
    expect(verdict.projectedGrowthBytes).toBeGreaterThan(4e6);
  });

  it('scales the threshold with a large live heap', () => {
    expect(judgeTrend(line(0, 200e6), 600).thresholdBytes).toBe(4e6);
  });

  it('takes the lowest sample of each window, at the window middle', () => {
    const samples: Point[] = [
      { t: 5, bytes: 80 },
      { t: 25, bytes: 60 },
      { t: 55, bytes: 70 },
      { t: 65, bytes: 90 },
      { t: 110, bytes: 75 },
      { t: 200, bytes: 50 },
    ];
    expect(windowFloors(samples, 60)).toEqual([
      { t: 30, bytes: 60 },
      { t: 90, bytes: 75 },
      { t: 210, bytes: 50 },
    ]);
  });

  it('refuses to fit fewer than two distinct times', () => {
    expect(() => leastSquares([{ t: 1, bytes: 1 }])).toThrow(/two points/);
    expect(() =>
      leastSquares([
        { t: 1, bytes: 1 },
        { t: 1, bytes: 2 },
      ]),
    ).toThrow(/two different times/);
  });
});
