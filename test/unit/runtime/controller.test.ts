import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/api-error.js';
import { ManualClock, flushMicrotasks } from '../../support/manual-clock.js';
import {
  Action,
  Controller,
  isTerminal,
  TerminalError,
  type ReconcileRequest,
  type ReconcileResult,
} from '../../../src/runtime/controller.js';
import { Informer, type ListerWatcher } from '../../../src/kube/informer.js';
import type { KubeObject, WatchEvent } from '../../../src/api/common/kube-object.js';
import { Predicates } from '../../../src/runtime/predicates.js';
import { reconcileErrors, reconcileTotal } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';

/** A transport serving a fixed list and then a watch the test pushes events into. */
class PushTransport implements ListerWatcher<KubeObject> {
  private emit: ((e: WatchEvent) => void) | undefined;
  constructor(private readonly items: KubeObject[]) {}
  async list() {
    return { items: structuredClone(this.items), resourceVersion: '1' };
  }
  watch(_opts: unknown, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    this.emit = onEvent;
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
  push(e: WatchEvent): void {
    if (!this.emit) throw new Error('no watch open');
    this.emit(e);
  }
}

const obj = (name: string, rv: string, spec: Record<string, unknown> = {}): KubeObject => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  spec,
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

let seq = 0;
function start(items: KubeObject[], reconcile: (req: ReconcileRequest) => Promise<ReconcileResult>, workers = 2) {
  const clock = new ManualClock();
  const transport = new PushTransport(items);
  const informer = new Informer(transport, { name: `ctl-informer-${seq}`, clock });
  const controller = new Controller({
    name: `ctl-${seq++}`,
    kind: 'Thing',
    primary: informer,
    reconcile,
    workers,
    clock,
  });
  const stop = new AbortController();
  const informerRun = informer.run(stop.signal);
  const controllerRun = controller.run(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await Promise.all([informerRun, controllerRun]);
  });
  return { clock, transport, informer, controller, stop, controllerRun };
}

describe('Controller', () => {
  it('reconciles every listed object once after sync, with key, namespace and name', async () => {
    const seen: string[] = [];
    const { controller } = start([obj('a', '1'), obj('b', '1')], async (req) => {
      seen.push(`${req.key}|${req.namespace}|${req.name}`);
      return Action.done();
    });
    await flushMicrotasks();
    expect(seen.sort()).toEqual(['ns/a|ns|a', 'ns/b|ns|b']);
    expect(await metricValue(reconcileTotal, { controller: controller.name, result: 'success' })).toBe(2);
  });

  it('backs off a failing key 5 ms, 10 ms, 20 ms and forgets the backoff on success', async () => {
    let calls = 0;
    const { clock, controller } = start([obj('a', '1')], async () => {
      calls++;
      if (calls <= 3) throw new ApiError(409, 'Conflict', 'conflict', {});
      return Action.done();
    });
    await flushMicrotasks();
    expect(calls).toBe(1);
    await clock.advance(5);
    expect(calls).toBe(2);
    await clock.advance(9);
    expect(calls).toBe(2);
    await clock.advance(1);
    expect(calls).toBe(3);
    await clock.advance(20);
    expect(calls).toBe(4);
    expect(controller.queue.numRequeues('ns/a')).toBe(0);
    expect(await metricValue(reconcileErrors, { controller: controller.name, kind: 'Conflict' })).toBe(3);
    expect(await metricValue(reconcileTotal, { controller: controller.name, result: 'error' })).toBe(3);
  });

  it('survives a reconcile that throws a non-Error value', async () => {
    let calls = 0;
    const { clock } = start([obj('a', '1')], async () => {
      calls++;
      if (calls === 1) throw 'not an error object';
      return Action.done();
    });
    await flushMicrotasks();
    await clock.advance(5);
    expect(calls).toBe(2);
  });

  it('requeueAfter runs the key again after the given delay and counts requeue_after', async () => {
    let calls = 0;
    const { clock, controller } = start([obj('a', '1')], async () => {
      calls++;
      return calls === 1 ? Action.requeueAfter(30_000) : Action.done();
    });
    await flushMicrotasks();
    await clock.advance(29_999);
    expect(calls).toBe(1);
    await clock.advance(1);
    expect(calls).toBe(2);
    expect(await metricValue(reconcileTotal, { controller: controller.name, result: 'requeue_after' })).toBe(1);
  });

  it('never reconciles one key concurrently; an event during a reconcile causes exactly one more run', async () => {
    let active = 0;
    let maxActive = 0;
    let calls = 0;
    let release: () => void = () => undefined;
    const { transport } = start(
      [obj('a', '1')],
      async () => {
        calls++;
        active++;
        maxActive = Math.max(maxActive, active);
        if (calls === 1) await new Promise<void>((r) => (release = r));
        active--;
        return Action.done();
      },
      4,
    );
    await flushMicrotasks();
    transport.push({ type: 'MODIFIED', object: obj('a', '2') });
    transport.push({ type: 'MODIFIED', object: obj('a', '3') });
    await flushMicrotasks();
    expect(calls).toBe(1);
    release();
    await flushMicrotasks();
    expect(calls).toBe(2);
    expect(maxActive).toBe(1);
  });

  it('maps secondary objects to primary keys', async () => {
    const seen: string[] = [];
    const clock = new ManualClock();
    const primaryT = new PushTransport([]);
    const secondaryT = new PushTransport([]);
    const primary = new Informer(primaryT, { name: 'map-primary', clock });
    const secondary = new Informer(secondaryT, { name: 'map-secondary', clock });
    const controller = new Controller({
      name: 'ctl-map',
      kind: 'DeployedModel',
      primary,
      clock,
      reconcile: async (req) => {
        seen.push(req.key);
        return Action.done();
      },
    });
    // An endpoint change enqueues the models whose spec.endpointRef names it (old and new state).
    controller.watches(secondary, (endpoint) => [`${endpoint.metadata.namespace}/model-of-${endpoint.metadata.name}`]);
    const stop = new AbortController();
    const runs = [primary.run(stop.signal), secondary.run(stop.signal), controller.run(stop.signal)];
    cleanups.push(async () => {
      stop.abort();
      await Promise.all(runs);
    });
    await flushMicrotasks();
    secondaryT.push({ type: 'ADDED', object: obj('e1', '2') });
    await flushMicrotasks();
    expect(seen).toEqual(['ns/model-of-e1']);
  });

  it('watches with a predicate: adds and deletes always map, updates only when the predicate holds', async () => {
    const seen: string[] = [];
    const clock = new ManualClock();
    const primaryT = new PushTransport([]);
    const secondaryT = new PushTransport([]);
    const primary = new Informer(primaryT, { name: 'pred-primary', clock });
    const secondary = new Informer(secondaryT, { name: 'pred-secondary', clock });
    const controller = new Controller({
      name: 'ctl-pred',
      kind: 'DeployedModel',
      primary,
      clock,
      reconcile: async (req) => {
        seen.push(req.key);
        return Action.done();
      },
    });
    controller.watches(secondary, (ep) => [`ns/child-of-${ep.metadata.name}`], {
      predicate: Predicates.generationChanged,
    });
    const stop = new AbortController();
    const runs = [primary.run(stop.signal), secondary.run(stop.signal), controller.run(stop.signal)];
    cleanups.push(async () => {
      stop.abort();
      await Promise.all(runs);
    });
    await flushMicrotasks();
    const ep = (rv: string, generation: number, extra: Partial<KubeObject> = {}): KubeObject => ({
      metadata: { name: 'e', namespace: 'ns', resourceVersion: rv, generation },
      ...extra,
    });
    secondaryT.push({ type: 'ADDED', object: ep('2', 1) });
    await flushMicrotasks();
    expect(seen).toEqual(['ns/child-of-e']);
    // A status write and a label edit: same generation, nothing to do for the children.
    secondaryT.push({ type: 'MODIFIED', object: ep('3', 1, { status: { phase: 'x' } }) });
    secondaryT.push({ type: 'MODIFIED', object: { metadata: { ...ep('4', 1).metadata, labels: { a: 'b' } } } });
    await flushMicrotasks();
    expect(seen).toEqual(['ns/child-of-e']);
    secondaryT.push({ type: 'MODIFIED', object: ep('5', 2) });
    await flushMicrotasks();
    expect(seen).toEqual(['ns/child-of-e', 'ns/child-of-e']);
    secondaryT.push({
      type: 'MODIFIED',
      object: { metadata: { ...ep('6', 2).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
    });
    await flushMicrotasks();
    secondaryT.push({ type: 'DELETED', object: ep('7', 2) });
    await flushMicrotasks();
    expect(seen).toHaveLength(4);
  });

  it('watches with a delay coalesces a burst of changes into one reconcile per key', async () => {
    const seen: string[] = [];
    const clock = new ManualClock();
    const primaryT = new PushTransport([]);
    const secondaryT = new PushTransport([]);
    const primary = new Informer(primaryT, { name: 'delay-primary', clock });
    const secondary = new Informer(secondaryT, { name: 'delay-secondary', clock });
    const controller = new Controller({
      name: 'ctl-delay',
      kind: 'RegistryService',
      primary,
      clock,
      reconcile: async (req) => {
        seen.push(req.key);
        return Action.done();
      },
    });
    controller.watches(secondary, () => ['ns/parent'], { delayMs: 1000 });
    const stop = new AbortController();
    const runs = [primary.run(stop.signal), secondary.run(stop.signal), controller.run(stop.signal)];
    cleanups.push(async () => {
      stop.abort();
      await Promise.all(runs);
    });
    await flushMicrotasks();
    for (let i = 0; i < 5; i++) secondaryT.push({ type: 'ADDED', object: obj(`e${i}`, String(10 + i)) });
    await flushMicrotasks();
    expect(seen).toEqual([]);
    await clock.advance(999);
    await flushMicrotasks();
    expect(seen).toEqual([]);
    await clock.advance(1);
    await flushMicrotasks();
    expect(seen).toEqual(['ns/parent']);
  });

  it('Predicates.labelsChanged and or() combine', () => {
    const a: KubeObject = { metadata: { name: 'a', generation: 1, labels: { x: '1' } } };
    expect(Predicates.labelsChanged(a, { metadata: { ...a.metadata, labels: { x: '2' } } })).toBe(true);
    expect(Predicates.labelsChanged(a, { metadata: { ...a.metadata, generation: 2 } })).toBe(false);
    const either = Predicates.or(Predicates.labelsChanged, Predicates.generationChanged);
    expect(either(a, { metadata: { ...a.metadata, generation: 2 } })).toBe(true);
    expect(either(a, { ...a, status: { s: 1 } })).toBe(false);
  });

  it('req.signal stays live while a draining shutdown waits, and aborts once the drain is over', async () => {
    let release: () => void = () => undefined;
    let signal: AbortSignal | undefined;
    const { controller } = start([obj('a', '1')], async (req) => {
      signal = req.signal;
      await new Promise<void>((r) => (release = r));
      return Action.done();
    });
    await flushMicrotasks();
    const drained = controller.shutdown(10_000);
    await flushMicrotasks();
    expect(signal?.aborted).toBe(false); // in-flight work may still write
    release();
    expect(await drained).toBe(true);
    expect(signal?.aborted).toBe(true);
  });

  it('a terminal error (403) is not retried; a retryable one backs off', async () => {
    const calls: string[] = [];
    const { clock } = start([obj('forbidden', '1'), obj('flaky', '1')], async (req) => {
      calls.push(req.name);
      throw new ApiError(
        req.name === 'forbidden' ? 403 : 500,
        req.name === 'forbidden' ? 'Forbidden' : 'InternalError',
        'no',
        {},
      );
    });
    await flushMicrotasks();
    await clock.advance(1_000);
    expect(calls.filter((c) => c === 'forbidden')).toHaveLength(1);
    expect(calls.filter((c) => c === 'flaky').length).toBeGreaterThan(3);
    expect(isTerminal(new TerminalError(new Error('x')))).toBe(true);
    expect(isTerminal(new ApiError(422, 'Invalid', 'bad', {}))).toBe(true);
    expect(isTerminal(new ApiError(409, 'Conflict', 'c', {}))).toBe(false);
  });

  it('shutdown drains the in-flight reconcile and stops taking keys', async () => {
    let release: () => void = () => undefined;
    let finished = false;
    const { controller, transport } = start([obj('a', '1')], async () => {
      await new Promise<void>((r) => (release = r));
      finished = true;
      return Action.done();
    });
    await flushMicrotasks();
    const drained = controller.shutdown(10_000);
    transport.push({ type: 'ADDED', object: obj('b', '1') });
    release();
    expect(await drained).toBe(true);
    expect(finished).toBe(true);
    expect(controller.queue.length).toBe(0);
  });
});
