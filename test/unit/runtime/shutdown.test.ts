import { describe, expect, it } from 'vitest';
import { Shutdown } from '../../../src/runtime/shutdown.js';

describe('Shutdown', () => {
  it('aborts the signal, runs steps in order, survives a failing step, and exits 0 once', async () => {
    const order: string[] = [];
    const exits: number[] = [];
    const s = new Shutdown({ exit: (c) => exits.push(c), signals: [] });
    s.addStep({
      name: 'drain',
      run: async () => {
        order.push(`drain:${s.signal.aborted}`);
      },
    });
    s.addStep({
      name: 'broken',
      run: async () => {
        throw new Error('boom');
      },
    });
    s.addStep({
      name: 'release-lease',
      run: async () => {
        order.push('release');
      },
    });
    await Promise.all([s.run(), s.run()]);
    expect(order).toEqual(['drain:true', 'release']);
    expect(exits).toEqual([0]);
  });

  it('bounds a step that hangs and still runs the later steps', async () => {
    const order: string[] = [];
    const s = new Shutdown({ exit: () => undefined, signals: [] });
    s.addStep({ name: 'hang', run: () => new Promise(() => undefined), timeoutMs: 50 });
    s.addStep({
      name: 'close',
      run: async () => {
        order.push('close');
      },
    });
    const t0 = Date.now();
    await s.run();
    expect(order).toEqual(['close']);
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('starts on SIGTERM once installed', async () => {
    const exits: number[] = [];
    const s = new Shutdown({ exit: (c) => exits.push(c), signals: ['SIGUSR2'] }).install();
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 20));
    expect(s.signal.aborted).toBe(true);
    expect(exits).toEqual([0]);
  });
});
