import { describe, expect, it } from 'vitest';
import { allSettledOrThrow } from '../../../../dev/host/all-settled.js';

describe('allSettledOrThrow', () => {
  it('returns every value in order, undefined steps included', async () => {
    const values = await allSettledOrThrow([Promise.resolve(1), undefined, Promise.resolve('two')]);
    expect(values).toEqual([1, undefined, 'two']);
  });

  it('throws the first failure only once every step has settled', async () => {
    let slowDone = false;
    const slow = new Promise<void>((resolve) =>
      setTimeout(() => {
        slowDone = true;
        resolve();
      }, 30),
    );
    const failure = new Error('the apiserver did not start');
    await expect(allSettledOrThrow([Promise.reject(failure), slow])).rejects.toBe(failure);
    expect(slowDone).toBe(true);
  });
});
