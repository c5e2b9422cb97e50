import { describe, expect, it } from 'vitest';
import { OutlierDetector } from '../../../src/gateway/outlier-detection.js';

describe('OutlierDetector', () => {
  const make = () => {
    let now = 0;
    const d = new OutlierDetector({
      consecutiveFailures: 3,
      baseEjectionMs: 1000,
      maxEjectionMs: 2500,
      now: () => now,
    });
    return { d, tick: (ms: number) => (now += ms) };
  };

  it('ejects at once on a refused connect, and lets the endpoint back when the time is up', () => {
    const { d, tick } = make();
    d.failure('a', 'connect');
    expect(d.isEjected('a')).toBe(true);
    tick(999);
    expect(d.isEjected('a')).toBe(true);
    tick(1);
    expect(d.isEjected('a')).toBe(false);
  });

  it('ejects at once on a reset connection (its server was killed or is stopping)', () => {
    const { d } = make();
    d.failure('a', 'reset');
    expect(d.isEjected('a')).toBe(true);
    expect(d.isEjected('b')).toBe(false);
  });

  it('ejects after consecutive gateway failures only; a success resets the count', () => {
    const { d } = make();
    d.failure('a', 'gateway');
    d.failure('a', 'gateway');
    d.success('a');
    d.failure('a', 'gateway');
    d.failure('a', 'gateway');
    expect(d.isEjected('a')).toBe(false);
    d.failure('a', 'gateway');
    expect(d.isEjected('a')).toBe(true);
  });

  it('ejects a repeat offender for longer, up to the cap', () => {
    const { d, tick } = make();
    const ejections: number[] = [];
    d.onEject = (_k, until) => ejections.push(until);
    d.failure('a', 'connect'); // until 1000
    tick(1000);
    d.failure('a', 'connect'); // 2000 more
    tick(2000);
    d.failure('a', 'connect'); // capped at 2500
    expect(ejections).toEqual([1000, 3000, 5500]);
  });

  it('forgets the history of an endpoint healthy for longer than the longest ejection', () => {
    const { d, tick } = make();
    const lengths: number[] = [];
    d.onEject = (_k, until) => lengths.push(until - tick(0));
    d.failure('a', 'connect'); // ejected for 1000
    tick(1000);
    d.success('a');
    d.failure('a', 'connect'); // recently ejected: a repeat offence counts double
    tick(2000);
    d.success('a');
    tick(2501);
    d.success('a'); // healthy for longer than the cap since its ejection ended
    d.failure('a', 'connect'); // a first offence again
    expect(lengths).toEqual([1000, 2000, 1000]);
  });
});
