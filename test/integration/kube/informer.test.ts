import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer, kubeListerWatcher, type ListerWatcher } from '../../../src/kube/informer.js';
import type { KubeClient, WatchOptions } from '../../../src/kube/kube-client.js';
import { coreResources, type KubeObject, type WatchEvent } from '../../../src/api/common/kube-object.js';
import { informerRelists } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { compactEtcd, eventually, testClient } from '../runtime/helpers.js';

/** Wraps the real transport so the test can cut the watch connection and hold it down. */
class Interruptible<T> implements ListerWatcher<T> {
  private down = false;
  private current: AbortController | undefined;
  private resumed: Array<() => void> = [];
  constructor(private readonly inner: ListerWatcher<T>) {}
  list = (opts: Parameters<ListerWatcher<T>['list']>[0]) => this.inner.list(opts);
  async watch(opts: WatchOptions, onEvent: (e: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    if (this.down) await new Promise<void>((r) => this.resumed.push(r));
    const ac = new AbortController();
    signal.addEventListener('abort', () => ac.abort(), { once: true });
    this.current = ac;
    return this.inner.watch(opts, onEvent, ac.signal);
  }
  cut(): void {
    this.down = true;
    this.current?.abort();
  }
  resume(): void {
    this.down = false;
    for (const r of this.resumed.splice(0)) r();
  }
}

const yamlCm = (ns: string, name: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  value: "${value}"\n`;

describe('Informer against the real apiserver', () => {
  let client: KubeClient;
  const stop = new AbortController();
  const runs: Promise<void>[] = [];

  beforeAll(() => {
    client = testClient();
  });
  afterAll(async () => {
    stop.abort();
    await Promise.all(runs);
    client.close();
  });

  it('sees add, update and delete of ConfigMaps made with kubectl', async () => {
    const ns = await createTestNamespace('rt-informer');
    expect((await kubectl(['apply', '-f', '-'], { input: yamlCm(ns, 'before', '0') })).code).toBe(0);
    const informer = new Informer(kubeListerWatcher(client, coreResources.configMaps, ns), { name: 'it-configmaps' });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => seen.push(`add:${o.metadata.name ?? ''}`),
      onUpdate: (_old, o) =>
        seen.push(`update:${o.metadata.name ?? ''}:${String((o.data as Record<string, string> | undefined)?.value)}`),
      onDelete: (o) => seen.push(`delete:${o.metadata.name ?? ''}`),
    });
    runs.push(informer.run(stop.signal));
    expect(await informer.waitForSync(stop.signal)).toBe(true);
    expect(informer.get(ns, 'before')).toBeDefined();
    expect(informer.get(ns, 'before')?.metadata.managedFields).toBeUndefined();

    expect((await kubectl(['apply', '-f', '-'], { input: yamlCm(ns, 'live', '1') })).code).toBe(0);
    await eventually('add', () => informer.get(ns, 'live'));
    expect((await kubectl(['apply', '-f', '-'], { input: yamlCm(ns, 'live', '2') })).code).toBe(0);
    await eventually(
      'update',
      () => (informer.get(ns, 'live')?.data as Record<string, string> | undefined)?.value === '2',
    );
    expect((await kubectl(['delete', 'configmap', 'live', '-n', ns])).code).toBe(0);
    await eventually('delete', () => informer.get(ns, 'live') === undefined);
    expect(seen).toEqual(expect.arrayContaining(['add:before', 'add:live', 'update:live:2', 'delete:live']));
    expect(seen.indexOf('add:live')).toBeLessThan(seen.indexOf('update:live:2'));
    expect(seen.indexOf('update:live:2')).toBeLessThan(seen.indexOf('delete:live'));
  });

  it('relists after 410 Expired (etcd compacted while the watch was down) and misses no delete', async () => {
    const ns = await createTestNamespace('rt-relist');
    for (const n of ['keep', 'doomed', 'changed'])
      expect((await kubectl(['apply', '-f', '-'], { input: yamlCm(ns, n, '0') })).code).toBe(0);
    const transport = new Interruptible(kubeListerWatcher<KubeObject>(client, coreResources.configMaps, ns));
    const informer = new Informer(transport, { name: 'it-relist', initialBackoffMs: 50 });
    const deleted: string[] = [];
    informer.addEventHandler({ onDelete: (o) => deleted.push(o.metadata.name ?? '') });
    runs.push(informer.run(stop.signal));
    await informer.waitForSync(stop.signal);
    const rvBefore = informer.resourceVersion;
    const relistsBefore = await metricValue(informerRelists, { resource: 'it-relist', reason: 'expired' });

    transport.cut();
    expect((await kubectl(['delete', 'configmap', 'doomed', '-n', ns])).code).toBe(0);
    expect((await kubectl(['apply', '-f', '-'], { input: yamlCm(ns, 'changed', '1') })).code).toBe(0);
    const compactedAt = await compactEtcd();
    expect(compactedAt).toBeGreaterThan(Number(rvBefore));
    transport.resume();

    await eventually('the vanished object to be reported deleted', () => deleted.includes('doomed'));
    expect(informer.get(ns, 'doomed')).toBeUndefined();
    await eventually(
      'the change made while down',
      () => (informer.get(ns, 'changed')?.data as Record<string, string> | undefined)?.value === '1',
    );
    expect(informer.get(ns, 'keep')).toBeDefined();
    expect(await metricValue(informerRelists, { resource: 'it-relist', reason: 'expired' })).toBe(relistsBefore + 1);
    // And it is watching again from the new list.
    expect((await kubectl(['apply', '-f', '-'], { input: yamlCm(ns, 'after', '0') })).code).toBe(0);
    await eventually('an object created after the relist', () => informer.get(ns, 'after'));
  });
});
