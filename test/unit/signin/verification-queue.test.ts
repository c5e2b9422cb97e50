import { describe, expect, it } from 'vitest';
import { metricsRegistry } from '../../../src/base/metrics.js';
import { VerificationQueue } from '../../../src/signin/verification-queue.js';

/** A verification the test finishes by hand, recording the order in which verifications start. */
function gate(started: string[], name: string): { verify: () => Promise<string>; finish: () => void } {
  let finish = (): void => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    verify: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('password verifications: bounded concurrency, a fair share per client', () => {
  it('refuses a client over its share at once, without running anything, and gives the share back when done', async () => {
    const q = new VerificationQueue({ concurrency: 1, perClient: 2, queueLength: 10 });
    const started: string[] = [];
    const a1 = q.admit('a');
    const a2 = q.admit('a');
    const a3 = q.admit('a');
    expect(a3).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'client' });
    if (!a1.admitted || !a2.admitted) throw new Error('admitted expected');
    const g1 = gate(started, 'a1');
    const r1 = a1.ticket.run(g1.verify);
    a2.ticket.cancel();
    expect(q.admit('a').admitted).toBe(true);
    g1.finish();
    expect(await r1).toBe('a1');
  });

  it('runs waiting verifications round-robin between clients: a newcomer waits for one of each other client, not for a whole burst', async () => {
    const q = new VerificationQueue({ concurrency: 1, perClient: 4, queueLength: 100 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const run = (client: string, name: string): Promise<string> => {
      const admission = q.admit(client);
      if (!admission.admitted) throw new Error(`${name} refused`);
      const g = gate(started, name);
      gates.set(name, g);
      return admission.ticket.run(g.verify);
    };
    const all = ['x1', 'x2', 'x3', 'x4'].map((n) => run('attacker', n));
    all.push(run('user', 'u1'));
    await tick();
    expect(started).toEqual(['x1']);
    for (const name of ['x1', 'x2', 'u1', 'x3', 'x4']) {
      gates.get(name)?.finish();
      await tick();
      await tick();
    }
    await Promise.all(all);
    expect(started).toEqual(['x1', 'x2', 'u1', 'x3', 'x4']);
  });

  it('never runs more than `concurrency` at once, and refuses when the queue is full', async () => {
    const q = new VerificationQueue({ concurrency: 2, perClient: 100, queueLength: 3 });
    let running = 0;
    let most = 0;
    const finishers: (() => void)[] = [];
    const verify = async (): Promise<void> => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => finishers.push(r));
      running--;
    };
    const runs: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      const a = q.admit(`c${i}`);
      if (!a.admitted) throw new Error('admitted expected');
      runs.push(a.ticket.run(verify));
    }
    await tick();
    expect(q.admit('late')).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'queue' });
    while (finishers.length > 0 || running > 0) {
      finishers.shift()?.();
      await tick();
    }
    await Promise.all(runs);
    expect(most).toBe(2);
  });

  it('keeps a slot for other clients: one client runs at most concurrency − 1 at once, and a newcomer starts at once', async () => {
    const q = new VerificationQueue({ concurrency: 3, perClient: 4, queueLength: 100 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const run = (client: string, name: string): Promise<string> => {
      const admission = q.admit(client);
      if (!admission.admitted) throw new Error(`${name} refused`);
      const g = gate(started, name);
      gates.set(name, g);
      return admission.ticket.run(g.verify);
    };
    const all = ['x1', 'x2', 'x3', 'x4'].map((n) => run('attacker', n));
    await tick();
    expect(started).toEqual(['x1', 'x2']); // the third slot stays free although x3 and x4 wait
    all.push(run('user', 'u1'));
    await tick();
    expect(started).toEqual(['x1', 'x2', 'u1']);
    gates.get('x1')?.finish();
    await tick();
    await tick();
    expect(started).toEqual(['x1', 'x2', 'u1', 'x3']); // a slot of its own came free: the attacker runs 2 again
    gates.get('u1')?.finish();
    await tick();
    await tick();
    expect(started).toEqual(['x1', 'x2', 'u1', 'x3']); // the user's slot is not the attacker's third
    for (const name of ['x2', 'x3', 'x4']) {
      gates.get(name)?.finish();
      await tick();
      await tick();
    }
    await Promise.all(all);
    expect(started).toEqual(['x1', 'x2', 'u1', 'x3', 'x4']);
  });

  it('counts the refusals callers make before admission (refuseOverShare) with those of admit', async () => {
    const refused = async (): Promise<number> =>
      (
        await metricsRegistry.getSingleMetric('endpoint_operator_signin_verifications_refused_total')?.get()
      )?.values.find((v) => v.labels['reason'] === 'client')?.value ?? 0;
    const q = new VerificationQueue({ concurrency: 2, perClient: 1, queueLength: 10 });
    const before = await refused();
    expect(q.refuseOverShare('a')).toBe(false);
    const held = q.admit('a');
    expect(held.admitted).toBe(true);
    expect(q.refuseOverShare('a')).toBe(true);
    expect(q.refuseOverShare('b')).toBe(false);
    expect(q.admit('a').admitted).toBe(false);
    expect((await refused()) - before).toBe(2);
    if (held.admitted) held.ticket.cancel();
    expect(q.refuseOverShare('a')).toBe(false);
  });
});
