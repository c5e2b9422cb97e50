import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/api-error.js';
import { ManualClock, flushMicrotasks } from '../../support/manual-clock.js';
import { Informer, type ListerWatcher } from '../../../src/kube/informer.js';
import type { ListOptions, ListResult, WatchOptions } from '../../../src/kube/kube-client.js';
import type { KubeObject, WatchEvent } from '../../../src/api/common/kube-object.js';
import { informerWatchRestarts } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';

function cm(
  name: string,
  rv: string,
  extra: Partial<KubeObject['metadata']> = {},
  data: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', resourceVersion: rv, ...extra },
    data,
  };
}

type ListStep = ListResult<KubeObject> | Error;
/**
 * Plays one watch call: emits events, then resolves (server closed), rejects (failure) or waits for abort.
 * `open` tells the informer the server accepted the watch; the transport calls it unless the step refuses.
 */
type WatchStep = (emit: (e: WatchEvent) => void, signal: AbortSignal, open: () => void) => Promise<void>;

/** A scripted transport: each list/watch call takes the next step and records its options. */
class ScriptedTransport implements ListerWatcher<KubeObject> {
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  constructor(
    private readonly lists: ListStep[],
    private readonly watches: WatchStep[],
  ) {}

  async list(opts: ListOptions): Promise<ListResult<KubeObject>> {
    this.listCalls.push(opts);
    const step = this.lists.shift();
    if (!step) throw new Error('unscripted list');
    if (step instanceof Error) throw step;
    return structuredClone(step);
  }

  watch(opts: WatchOptions, onEvent: (e: WatchEvent) => void, signal: AbortSignal, onOpen?: () => void): Promise<void> {
    this.watchCalls.push(opts);
    const step = this.watches.shift() ?? hangUntilAborted();
    return step(onEvent, signal, onOpen ?? (() => undefined));
  }
}

const hangUntilAborted = (): WatchStep => (_emit, signal, open) =>
  new Promise((resolve) => {
    open();
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });

/** Emits the events, then keeps the stream open until aborted. */
const emitThenHang =
  (events: WatchEvent[]): WatchStep =>
  async (emit, signal, open) => {
    open();
    for (const e of events) emit(structuredClone(e));
    await hangUntilAborted()(emit, signal, () => undefined);
  };

const failWith =
  (err: Error): WatchStep =>
  () =>
    Promise.reject(err);

interface Recorded {
  type: 'add' | 'update' | 'delete';
  name: string;
  rv: string | undefined;
}

/** `clock` lets scripted steps that wait on the same clock be built before the informer. */
function setup(
  lists: ListStep[],
  watches: WatchStep[],
  opts: { inactivityTimeoutMs?: number; clock?: ManualClock } = {},
) {
  const { clock = new ManualClock(1_000_000), ...informerOpts } = opts;
  const transport = new ScriptedTransport(lists, watches);
  const informer = new Informer(transport, {
    name: `test-${Math.random()}`,
    clock,
    random: () => 0.5,
    pageSize: 2,
    ...informerOpts,
  });
  const events: Recorded[] = [];
  const rec = (type: Recorded['type']) => (o: KubeObject) =>
    events.push({ type, name: o.metadata.name ?? '', rv: o.metadata.resourceVersion });
  informer.addEventHandler({ onAdd: rec('add'), onUpdate: (_old, o) => rec('update')(o), onDelete: rec('delete') });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  stops.push(async () => {
    stop.abort();
    await running;
  });
  return { clock, transport, informer, events, stop, running };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

describe('Informer', () => {
  it('lists page by page, syncs, then watches from the list resourceVersion with bookmarks and a randomized timeout', async () => {
    const { transport, informer, events } = setup(
      [
        { items: [cm('a', '1'), cm('b', '2')], resourceVersion: '10', continue: 'page2' },
        { items: [cm('c', '3')], resourceVersion: '10' },
      ],
      [],
    );
    expect(await informer.waitForSync()).toBe(true);
    await flushMicrotasks();
    expect(transport.listCalls).toEqual([{ limit: 2 }, { limit: 2, continue: 'page2' }]);
    expect(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
    expect(events.map((e) => `${e.type}:${e.name}`)).toEqual(['add:a', 'add:b', 'add:c']);
    expect(transport.watchCalls).toHaveLength(1);
    const w = transport.watchCalls[0];
    expect(w?.resourceVersion).toBe('10');
    expect(w?.allowWatchBookmarks).toBe(true);
    expect(w?.timeoutSeconds).toBe(450); // 300 · (1 + 0.5)
  });

  it('applies watch events to the cache and handlers, strips managedFields and follows bookmarks', async () => {
    const { transport, informer, events } = setup(
      [{ items: [cm('a', '1')], resourceVersion: '5' }],
      [
        emitThenHang([
          { type: 'ADDED', object: cm('b', '6', { managedFields: [{ manager: 'kubectl' }] }) },
          { type: 'MODIFIED', object: cm('a', '7', {}, { k: 'v' }) },
          { type: 'DELETED', object: cm('b', '8') },
          { type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } },
        ]),
      ],
    );
    await informer.waitForSync();
    await flushMicrotasks();
    expect(events.map((e) => `${e.type}:${e.name}@${e.rv}`)).toEqual([
      'add:a@1',
      'add:b@6',
      'update:a@7',
      'delete:b@6',
    ]);
    expect(informer.get('ns', 'a')?.data).toEqual({ k: 'v' });
    expect(informer.get('ns', 'b')).toBeUndefined();
    expect(informer.resourceVersion).toBe('20');
    expect(transport.watchCalls).toHaveLength(1);
  });

  it('keeps no managedFields in the cache', async () => {
    const { informer } = setup(
      [{ items: [cm('a', '1', { managedFields: [{ manager: 'x' }] })], resourceVersion: '1' }],
      [],
    );
    await informer.waitForSync();
    expect(informer.get('ns', 'a')?.metadata.managedFields).toBeUndefined();
  });

  it('on a 410 ERROR event relists and emits deletes for objects that vanished meanwhile', async () => {
    const { transport, informer, events } = setup(
      [
        { items: [cm('a', '1'), cm('b', '2'), cm('c', '3')], resourceVersion: '3' },
        // After compaction: b was deleted and c changed while we were not watching; d is new.
        { items: [cm('a', '1'), cm('c', '9'), cm('d', '10')], resourceVersion: '11' },
      ],
      [
        emitThenHang([
          {
            type: 'ERROR',
            object: {
              kind: 'Status',
              code: 410,
              reason: 'Expired',
              message: 'too old resource version: 3 (8)',
            } as unknown as KubeObject,
          },
        ]),
      ],
    );
    await informer.waitForSync();
    await flushMicrotasks();
    expect(transport.listCalls).toHaveLength(2);
    expect(events.slice(3).map((e) => `${e.type}:${e.name}`)).toEqual(['add:d', 'update:c', 'delete:b']);
    expect(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'c', 'd']);
    expect(transport.watchCalls.map((w) => w.resourceVersion)).toEqual(['3', '11']);
  });

  it('on a 410 answer to the watch request relists too', async () => {
    const { transport, informer } = setup(
      [
        { items: [cm('a', '1')], resourceVersion: '3' },
        { items: [], resourceVersion: '12' },
      ],
      [failWith(new ApiError(410, 'Expired', 'too old', {}))],
    );
    await informer.waitForSync();
    await flushMicrotasks();
    expect(transport.listCalls).toHaveLength(2);
    expect(informer.list()).toEqual([]);
    expect(transport.watchCalls.map((w) => w.resourceVersion)).toEqual(['3', '12']);
  });

  it('backs off 600 ms then 1200 ms (random = 0.5) between failed watches, without relisting', async () => {
    const refused = new Error('connect ECONNREFUSED');
    const { clock, transport, informer } = setup(
      [{ items: [cm('a', '1')], resourceVersion: '4' }],
      [failWith(refused), failWith(refused), emitThenHang([{ type: 'MODIFIED', object: cm('a', '31') }])],
    );
    await informer.waitForSync();
    await flushMicrotasks();
    expect(transport.watchCalls).toHaveLength(1);
    await clock.advance(599);
    expect(transport.watchCalls).toHaveLength(1);
    await clock.advance(1); // 800 ms ceiling, half fixed + half jitter at 0.5 → 600 ms
    expect(transport.watchCalls).toHaveLength(2);
    await clock.advance(1199);
    expect(transport.watchCalls).toHaveLength(2);
    await clock.advance(1); // ceiling doubled to 1600 → 1200 ms
    expect(transport.watchCalls).toHaveLength(3);
    expect(transport.listCalls).toHaveLength(1);
    expect(transport.watchCalls.map((w) => w.resourceVersion)).toEqual(['4', '4', '4']);
    expect(informer.get('ns', 'a')?.metadata.resourceVersion).toBe('31');
  });

  it('retries a failed initial list with backoff and only then syncs', async () => {
    const { clock, transport, informer } = setup(
      [new Error('connect ECONNREFUSED'), { items: [cm('a', '1')], resourceVersion: '2' }],
      [],
    );
    await flushMicrotasks();
    expect(informer.hasSynced()).toBe(false);
    await clock.advance(600);
    expect(informer.hasSynced()).toBe(true);
    expect(transport.listCalls).toHaveLength(2);
  });

  it('rewatches at once when the server closes the stream normally', async () => {
    const { transport, informer } = setup(
      [{ items: [], resourceVersion: '4' }],
      [async (emit) => emit({ type: 'ADDED', object: cm('a', '5') })],
    );
    await informer.waitForSync();
    await flushMicrotasks();
    expect(transport.watchCalls.map((w) => w.resourceVersion)).toEqual(['4', '5']);
  });

  it('restarts a watch that stays silent past the inactivity timeout', async () => {
    const { clock, transport, informer } = setup(
      [{ items: [], resourceVersion: '4' }],
      [hangUntilAborted(), hangUntilAborted()],
      { inactivityTimeoutMs: 60_000 },
    );
    const before = await metricValue(informerWatchRestarts, { resource: informer.name, reason: 'stalled' });
    await informer.waitForSync();
    await flushMicrotasks();
    expect(transport.watchCalls).toHaveLength(1);
    await clock.advance(59_999);
    expect(transport.watchCalls).toHaveLength(1);
    await clock.advance(1);
    expect(transport.watchCalls).toHaveLength(2);
    expect(transport.listCalls).toHaveLength(1);
    expect(await metricValue(informerWatchRestarts, { resource: informer.name, reason: 'stalled' })).toBe(before + 1);
  });

  it('a handler that throws does not stop the informer or the other handlers', async () => {
    const { informer, events } = setup(
      [{ items: [], resourceVersion: '1' }],
      [
        emitThenHang([
          { type: 'ADDED', object: cm('a', '2') },
          { type: 'ADDED', object: cm('b', '3') },
        ]),
      ],
    );
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('boom');
      },
    });
    await informer.waitForSync();
    await flushMicrotasks();
    expect(events.map((e) => e.name)).toEqual(['a', 'b']);
  });

  it('indexes objects by a function and keeps the index current', async () => {
    const dm = (name: string, rv: string, endpoint: string): KubeObject => ({
      metadata: { name, namespace: 'ns', resourceVersion: rv },
      spec: { endpointRef: { name: endpoint } },
    });
    const { informer } = setup(
      [{ items: [dm('m1', '1', 'e1'), dm('m2', '2', 'e1'), dm('m3', '3', 'e2')], resourceVersion: '3' }],
      [
        emitThenHang([
          { type: 'MODIFIED', object: dm('m2', '4', 'e2') },
          { type: 'DELETED', object: dm('m3', '5', 'e2') },
        ]),
      ],
    );
    informer.addIndex('endpoint', (o) => {
      const spec = o.spec as { endpointRef?: { name?: string } } | undefined;
      return spec?.endpointRef?.name ? [`${o.metadata.namespace}/${spec.endpointRef.name}`] : [];
    });
    await informer.waitForSync();
    await flushMicrotasks();
    expect(informer.byIndex('endpoint', 'ns/e1').map((o) => o.metadata.name)).toEqual(['m1']);
    expect(informer.byIndex('endpoint', 'ns/e2').map((o) => o.metadata.name)).toEqual(['m2']);
  });

  it('waitForSync resolves false when aborted before the first list', async () => {
    const { informer } = setup([], []);
    const ac = new AbortController();
    const waiting = informer.waitForSync(ac.signal);
    ac.abort();
    expect(await waiting).toBe(false);
  });
});

describe('Informer hot-loop guard', () => {
  it('backs off when the server keeps closing the watch at once with no events', async () => {
    const closeAtOnce = (): WatchStep => async () => undefined;
    const { clock, transport, informer } = setup(
      [{ items: [], resourceVersion: '4' }],
      [closeAtOnce(), closeAtOnce(), closeAtOnce()],
    );
    await informer.waitForSync();
    await flushMicrotasks();
    expect(transport.watchCalls).toHaveLength(1);
    await clock.advance(600);
    expect(transport.watchCalls).toHaveLength(2);
  });
});

describe('Informer backoff reset', () => {
  const refused = (): WatchStep => failWith(new Error('connect ECONNREFUSED'));
  /** Accepted, stays open `ms` of clock time, then fails (a connection reset after a healthy, quiet stream). */
  const openThenFail =
    (clock: ManualClock, ms: number): WatchStep =>
    (_emit, _signal, open) => {
      open();
      return new Promise((_resolve, reject) => clock.setTimer(ms, () => reject(new Error('read ECONNRESET'))));
    };
  /** Held `ms` of clock time without an answer, then refused (a kube-apiserver still starting up). */
  const heldThenRefused =
    (clock: ManualClock, ms: number): WatchStep =>
    () =>
      new Promise((_resolve, reject) =>
        clock.setTimer(ms, () => reject(new ApiError(503, 'ServiceUnavailable', 'apiserver not ready', undefined))),
      );

  it('starts again from the initial backoff after a quiet watch that stayed up, even with no events', async () => {
    const clock = new ManualClock(1_000_000);
    // An outage (three refusals grow the ceiling to 6.4 s), then a healthy but silent watch for 60 s that breaks.
    const { transport, informer } = setup(
      [{ items: [], resourceVersion: '4' }],
      [refused(), refused(), refused(), openThenFail(clock, 60_000), refused()],
      { clock },
    );
    await informer.waitForSync();
    await flushMicrotasks();
    await clock.advance(600 + 1200 + 2400); // the three backoffs of the outage
    expect(transport.watchCalls).toHaveLength(4);
    await clock.advance(60_000); // the healthy watch breaks after a minute with no events
    await clock.advance(599);
    expect(transport.watchCalls).toHaveLength(4);
    await clock.advance(1); // 600 ms, the first step again, not 4.8 s
    expect(transport.watchCalls).toHaveLength(5);
  });

  it('keeps growing the backoff when a request is held for seconds and then refused, without the server accepting the watch', async () => {
    const clock = new ManualClock(1_000_000);
    // Refused twice (ceiling 3.2 s next), then held 2 s by a starting apiserver and refused: the outage goes on.
    const { transport, informer } = setup(
      [{ items: [], resourceVersion: '4' }],
      [refused(), refused(), heldThenRefused(clock, 2_000), refused()],
      { clock },
    );
    await informer.waitForSync();
    await flushMicrotasks();
    await clock.advance(600 + 1200); // the two refusals
    expect(transport.watchCalls).toHaveLength(3);
    await clock.advance(2_000); // held, then refused
    await clock.advance(2_399);
    expect(transport.watchCalls).toHaveLength(3);
    await clock.advance(1); // 2.4 s, the next step up, not the first one again
    expect(transport.watchCalls).toHaveLength(4);
  });
});
