import { describe, expect, it } from 'vitest';
import { ManualClock, flushMicrotasks } from '../../support/manual-clock.js';
import { workqueueRetries } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { WorkQueue } from '../../../src/runtime/work-queue.js';

function newQueue(name: string, clock = new ManualClock()): { q: WorkQueue; clock: ManualClock } {
  return { q: new WorkQueue({ name, clock }), clock };
}

describe('WorkQueue', () => {
  it('deduplicates a key added several times before it is processed', async () => {
    const { q } = newQueue('dedup');
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    q.add('ns/a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.length).toBe(0);
  });

  it('never hands a key to two workers at once; a re-add while processing is queued after done', async () => {
    const { q } = newQueue('no-concurrency');
    q.add('ns/a');
    expect(await q.get()).toBe('ns/a');
    q.add('ns/a'); // arrives while ns/a is in flight
    expect(q.length).toBe(0);
    let second: string | undefined = 'unset';
    void q.get().then((k) => (second = k));
    await flushMicrotasks();
    expect(second).toBe('unset'); // the waiting worker does not get ns/a yet
    q.done('ns/a');
    await flushMicrotasks();
    expect(second).toBe('ns/a');
  });

  it('a waiting get is woken by add', async () => {
    const { q } = newQueue('wake');
    const got = q.get();
    q.add('ns/x');
    expect(await got).toBe('ns/x');
  });

  it('backs off 5 ms, 10 ms, 20 ms ... capped at 5 min, and forget resets it', async () => {
    const { q } = newQueue('backoff');
    const delays = Array.from({ length: 20 }, () => q.nextDelay('ns/a'));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[15]).toBe(5 * 2 ** 15); // 163.84 s, still under the cap
    expect(delays[16]).toBe(300_000);
    expect(delays[19]).toBe(300_000);
    expect(Math.max(...delays)).toBe(300_000);
    expect(q.numRequeues('ns/a')).toBe(20);
    q.forget('ns/a');
    expect(q.numRequeues('ns/a')).toBe(0);
    expect(q.nextDelay('ns/a')).toBe(5);
    // Backoff is per key.
    expect(q.nextDelay('ns/b')).toBe(5);
  });

  it('addRateLimited delivers the key after the backoff delay and counts a retry', async () => {
    const { q, clock } = newQueue('rate-limited');
    const before = await metricValue(workqueueRetries, { name: 'rate-limited' });
    q.addRateLimited('ns/a'); // 5 ms
    q.addRateLimited('ns/a'); // 10 ms, but the earlier 5 ms timer stays
    expect(q.length).toBe(0);
    await clock.advance(4);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
    expect(await metricValue(workqueueRetries, { name: 'rate-limited' })).toBe(before + 2);
  });

  it('addAfter keeps the earliest of two requested times', async () => {
    const { q, clock } = newQueue('add-after');
    q.addAfter('ns/a', 1000);
    q.addAfter('ns/a', 300);
    q.addAfter('ns/a', 5000);
    await clock.advance(299);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
    await clock.advance(10_000);
    expect(q.length).toBe(1); // the later timers were replaced, not added
    expect(clock.pendingTimers).toBe(0);
  });

  it('addAfter with a non-positive delay adds at once', () => {
    const { q } = newQueue('add-after-zero');
    q.addAfter('ns/a', 0);
    expect(q.length).toBe(1);
  });

  it('shutdown wakes waiting workers with undefined and ignores later adds', async () => {
    const { q } = newQueue('shutdown');
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add('ns/a');
    expect(q.length).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it('shutDownWithDrain waits for in-flight keys', async () => {
    const { q } = newQueue('drain');
    q.add('ns/a');
    const key = await q.get();
    let drained: boolean | undefined;
    void q.shutDownWithDrain().then((d) => (drained = d));
    await flushMicrotasks();
    expect(drained).toBeUndefined();
    q.done(key ?? '');
    await flushMicrotasks();
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain gives up after its timeout', async () => {
    const { q, clock } = newQueue('drain-timeout');
    q.add('ns/a');
    await q.get();
    let drained: boolean | undefined;
    void q.shutDownWithDrain(1000).then((d) => (drained = d));
    await clock.advance(999);
    expect(drained).toBeUndefined();
    await clock.advance(1);
    expect(drained).toBe(false);
  });

  it('shutdown cancels delayed adds', async () => {
    const { q, clock } = newQueue('shutdown-delayed');
    q.addAfter('ns/a', 100);
    q.shutDown();
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(200);
    expect(q.length).toBe(0);
  });
});
