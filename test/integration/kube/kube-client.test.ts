import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/api-error.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { coreResources, type KubeObject } from '../../../src/api/common/kube-object.js';
import { restClientRequests } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace } from '../../support/cluster.js';
import { testClient } from '../runtime/helpers.js';

const cms = coreResources.configMaps;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

describe('KubeClient against the real apiserver', () => {
  let client: KubeClient;
  let ns: string;
  const warnings: string[] = [];

  beforeAll(async () => {
    client = testClient((w) => warnings.push(w));
    ns = await createTestNamespace('rt-client');
  });
  afterAll(() => client.close());

  const cm = (name: string, data: Record<string, string> = {}): ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { suite: 'client' } },
    data,
  });

  it('creates, gets, replaces and deletes; get of a missing object is undefined; delete of a missing one is false', async () => {
    const created = await client.create<ConfigMap>(cms, ns, cm('one', { a: '1' }));
    expect(created.metadata.uid).toBeTruthy();
    const got = await client.get<ConfigMap>(cms, ns, 'one');
    expect(got?.data).toEqual({ a: '1' });
    const replaced = await client.replace<ConfigMap>(cms, ns, 'one', { ...got, data: { a: '2' } });
    expect(replaced.data).toEqual({ a: '2' });
    expect(await client.get(cms, ns, 'missing')).toBeUndefined();
    expect(await client.delete(cms, ns, 'one')).toBe(true);
    expect(await client.delete(cms, ns, 'one')).toBe(false);
  });

  it('reports AlreadyExists, Conflict and Invalid as ApiError with status, reason and the Status body', async () => {
    await client.create(cms, ns, cm('dup'));
    const dup = await client.create(cms, ns, cm('dup')).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(ApiError);
    expect(dup).toMatchObject({ status: 409, reason: 'AlreadyExists' });
    const stale = await client.get<ConfigMap>(cms, ns, 'dup');
    await client.replace(cms, ns, 'dup', { ...stale, data: { x: '1' } });
    const conflict = await client.replace(cms, ns, 'dup', { ...stale, data: { x: '2' } }).catch((e: unknown) => e);
    expect(conflict).toMatchObject({ status: 409, reason: 'Conflict' });
    const invalid = await client.create(cms, ns, cm('Not_A_Name')).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 422, reason: 'Invalid' });
    expect((invalid as ApiError).body).toMatchObject({ kind: 'Status', code: 422 });
  });

  it('supports merge, JSON, strategic and server-side apply patches', async () => {
    await client.create(cms, ns, cm('patched', { a: '1' }));
    let p = await client.patch<ConfigMap>(cms, ns, 'patched', { data: { b: '2' } }, { type: 'merge' });
    expect(p.data).toEqual({ a: '1', b: '2' });
    p = await client.patch<ConfigMap>(cms, ns, 'patched', [{ op: 'remove', path: '/data/a' }], { type: 'json' });
    expect(p.data).toEqual({ b: '2' });
    p = await client.patch<ConfigMap>(cms, ns, 'patched', { data: { c: '3' } }, { type: 'strategic' });
    expect(p.data).toEqual({ b: '2', c: '3' });
    p = await client.patch<ConfigMap>(
      cms,
      ns,
      'patched',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched' }, data: { d: '4' } },
      { type: 'apply', fieldManager: 'rt-test', force: true },
    );
    expect(p.data).toMatchObject({ d: '4' });
    expect(p.metadata.managedFields?.some((m) => m.manager === 'rt-test')).toBe(true);
  });

  it('honours dryRun (nothing stored) and delete preconditions', async () => {
    await client.create(cms, ns, cm('dry'), { dryRun: true });
    expect(await client.get(cms, ns, 'dry')).toBeUndefined();
    const kept = await client.create<ConfigMap>(cms, ns, cm('guarded'));
    const wrong = await client
      .delete(cms, ns, 'guarded', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } })
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 409, reason: 'Conflict' });
    expect(await client.delete(cms, ns, 'guarded', { preconditions: { uid: kept.metadata.uid ?? '' } })).toBe(true);
  });

  it('lists with a label selector, page by page', async () => {
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5'])
      await client.create(cms, ns, { ...cm(n), metadata: { name: n, labels: { suite: 'paged' } } });
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await client.list<ConfigMap>(cms, ns, {
        labelSelector: 'suite=paged',
        limit: 2,
        ...(cont ? { continue: cont } : {}),
      });
      expect(page.resourceVersion).not.toBe('');
      names.push(...page.items.map((i) => i.metadata.name ?? ''));
      cont = page.continue;
      pages++;
    } while (cont);
    expect(pages).toBe(3);
    expect(names.sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
  });

  it('streams watch events and resolves when the server ends the watch (timeoutSeconds)', async () => {
    const start = await client.list(cms, ns, { limit: 1 });
    const events: string[] = [];
    const ac = new AbortController();
    const watching = client.watch<ConfigMap>(
      cms,
      ns,
      { resourceVersion: start.resourceVersion, timeoutSeconds: 2, allowWatchBookmarks: true },
      (e) => events.push(`${e.type}:${e.object.metadata.name ?? ''}`),
      ac.signal,
    );
    await client.create(cms, ns, cm('watched'));
    await client.delete(cms, ns, 'watched');
    await watching; // ends by itself after ~2 s
    expect(events.filter((e) => !e.startsWith('BOOKMARK'))).toEqual(['ADDED:watched', 'DELETED:watched']);
  });

  it('a watch ends at once, without error, when its signal aborts', async () => {
    const start = await client.list(cms, ns, { limit: 1 });
    const ac = new AbortController();
    const t0 = Date.now();
    const watching = client.watch(
      cms,
      ns,
      { resourceVersion: start.resourceVersion, timeoutSeconds: 60 },
      () => undefined,
      ac.signal,
    );
    setTimeout(() => ac.abort(), 200);
    await watching;
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('counts requests by verb and code', async () => {
    const before = await metricValue(restClientRequests, { verb: 'GET', code: '404' });
    await client.get(cms, ns, 'never-there');
    expect(await metricValue(restClientRequests, { verb: 'GET', code: '404' })).toBe(before + 1);
  });

  it('captures Warning headers (a deprecated API: core v1 Endpoints, deprecated since 1.33)', async () => {
    warnings.length = 0;
    await client.list({ group: '', version: 'v1', plural: 'endpoints', namespaced: true }, ns);
    expect(warnings.join('\n')).toMatch(/deprecated/i);
  });
});
