/**
 * Fault: the operator's watches resume from a resourceVersion etcd has compacted away (410 Gone), and the
 * events in between are lost for good. Forced for real: with kube-apiserver stopped, objects are deleted
 * and changed directly in etcd (no watch can deliver that), etcd is compacted, and the apiserver started
 * again. Only a relist can reveal the deletes; the test proves the 410 happened and that none was missed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { informerRelists } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import {
  deployedIds,
  deployedModel,
  eventually,
  EtcdGateway,
  listedEndpoints,
  predictionEndpoint,
  readyAndCurrent,
  registryEndpoint,
  registryService,
  resources,
  startFaultCluster,
  startOperatorUnderTest,
  type FaultCluster,
  type Observed,
  type OperatorUnderTest,
} from './own-control-plane.js';

const NS = 'fault-watch-gone';
const informerOf = (kind: keyof typeof resources): string =>
  `${resources[kind].group}/${resources[kind].version}/${resources[kind].plural}@${NS}`;

describe('410 Gone on watch resume after etcd compaction', () => {
  let cluster: FaultCluster | undefined;
  let op: OperatorUnderTest | undefined;

  beforeAll(async () => {
    cluster = await startFaultCluster(NS);
    op = await startOperatorUnderTest(cluster.plane, NS);
  });

  afterAll(async () => {
    try {
      await op?.stop();
    } finally {
      await cluster?.stop();
    }
  });

  const get = (kind: keyof typeof resources, name: string): Promise<Observed | undefined> => {
    if (cluster === undefined) throw new Error('no control plane');
    return cluster.client.get<Observed>(resources[kind], NS, name);
  };

  it('relists, and notices deletes and changes made while its watches were down', async () => {
    if (cluster === undefined || op === undefined)
      throw new Error('beforeAll did not start the control plane and the operator');
    const { client, plane } = cluster;
    const etcd = new EtcdGateway(plane.etcdEndpoint);
    const create = (kind: keyof typeof resources, obj: Parameters<typeof client.create>[2]): Promise<unknown> =>
      client.create(resources[kind], NS, obj);

    await create('predictionEndpoints', predictionEndpoint('scoring', { '1': 100 }));
    await create('deployedModels', deployedModel('live', 'scoring', '1'));
    await create('deployedModels', deployedModel('retired', 'scoring', '2'));
    await create('registryServices', registryService('checkout'));
    for (const name of ['checkout-a', 'checkout-b', 'checkout-gone'])
      await create('registryEndpoints', registryEndpoint(name, '10.0.0.1', 8443));
    await eventually(
      'the objects Ready',
      async () => {
        const [endpoint, retired, service, gone] = await Promise.all([
          get('predictionEndpoints', 'scoring'),
          get('deployedModels', 'retired'),
          get('registryServices', 'checkout'),
          get('registryEndpoints', 'checkout-gone'),
        ]);
        return (
          [endpoint, retired, service, gone].every(readyAndCurrent) &&
          deployedIds(endpoint).join() === '1,2' &&
          listedEndpoints(service).join() === 'checkout-a:8443,checkout-b:8443,checkout-gone:8443'
        );
      },
      30_000,
    );

    const relistsBefore = {
      deployedModels: await metricValue(informerRelists, { resource: informerOf('deployedModels'), reason: 'expired' }),
      registryEndpoints: await metricValue(informerRelists, {
        resource: informerOf('registryEndpoints'),
        reason: 'expired',
      }),
    };
    const newestCached = Math.max(
      ...['deployedModels', 'registryEndpoints']
        .flatMap((k) => op?.operator.cached(k as keyof typeof resources) ?? [])
        .map((o) => Number(o.metadata.resourceVersion)),
    );
    const logsBefore = op.logs.length;

    await plane.stopApiserver();
    const retiredKey = EtcdGateway.keyOf(resources.deployedModels, NS, 'retired');
    const goneKey = EtcdGateway.keyOf(resources.registryEndpoints, NS, 'checkout-gone');
    const changedKey = EtcdGateway.keyOf(resources.registryEndpoints, NS, 'checkout-a');
    // The keys are where the apiserver stores them (checked, not assumed).
    expect(await etcd.keys(`/registry/${resources.deployedModels.group}/`)).toEqual(
      expect.arrayContaining([retiredKey]),
    );
    expect(await etcd.keys(`/registry/${resources.registryEndpoints.group}/`)).toEqual(
      expect.arrayContaining([goneKey, changedKey]),
    );
    // A delete that bypasses the finalizer and every watch: only a list can tell.
    expect(await etcd.delete(retiredKey)).toBe(1);
    expect(await etcd.delete(goneKey)).toBe(1);
    // And a spec change the operator must reconcile (the apiserver would have bumped generation).
    const stored = JSON.parse((await etcd.get(changedKey)) ?? 'null') as {
      metadata: { generation: number };
      spec: { port: number };
    };
    stored.metadata.generation += 1;
    stored.spec.port = 9443;
    await etcd.put(changedKey, JSON.stringify(stored));
    const compactedAt = await etcd.compact();
    // Everything the operator has seen of these kinds predates the compaction: its next watch must get 410.
    expect(compactedAt).toBeGreaterThan(newestCached + 1);
    await plane.startApiserver();
    const apiserverReadyAt = Date.now();

    await eventually(
      'the missed deletes and change to be reconciled',
      async () => {
        const [endpoint, service, changed] = await Promise.all([
          get('predictionEndpoints', 'scoring'),
          get('registryServices', 'checkout'),
          get('registryEndpoints', 'checkout-a'),
        ]);
        return (
          readyAndCurrent(endpoint) &&
          deployedIds(endpoint).join() === '1' &&
          readyAndCurrent(changed) &&
          changed?.metadata.generation === 2 &&
          listedEndpoints(service).join() === 'checkout-a:9443,checkout-b:8443'
        );
      },
      60_000,
    );
    console.info(
      `[watch-gone] missed deletes reconciled ${Date.now() - apiserverReadyAt} ms after the restarted apiserver was ready`,
    );

    // The 410 really happened and was answered with a relist, which found the deleted objects gone.
    const since = op.logs.slice(logsBefore);
    for (const kind of ['deployedModels', 'registryEndpoints'] as const) {
      expect(await metricValue(informerRelists, { resource: informerOf(kind), reason: 'expired' }), kind).toBe(
        relistsBefore[kind] + 1,
      );
      expect(
        since.some((l) => l.informer === informerOf(kind) && l.msg === 'resourceVersion expired; relisting'),
        kind,
      ).toBe(true);
      expect(
        since.some((l) => l.informer === informerOf(kind) && l.msg === 'listed' && l['deleted'] === 1),
        kind,
      ).toBe(true);
    }
    expect(op.operator.cached('deployedModels').map((m) => m.metadata.name)).toEqual(['live']);
    expect(
      op.operator
        .cached('registryEndpoints')
        .map((e) => e.metadata.name)
        .sort(),
    ).toEqual(['checkout-a', 'checkout-b']);

    // And it watches again from the new list: a model created now is deployed.
    await create('deployedModels', deployedModel('fresh', 'scoring', '3'));
    await eventually(
      'a model created after the relist',
      async () => deployedIds(await get('predictionEndpoints', 'scoring')).join() === '1,3',
      30_000,
    );
    expect(op.exitedEarly()).toBeUndefined();
  });
});
