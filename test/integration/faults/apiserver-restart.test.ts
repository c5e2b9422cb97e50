/**
 * Fault: kube-apiserver goes away under a running operator and comes back. The operator must survive
 * (no crash, health endpoints answering), back off while the apiserver refuses connections, resume its
 * watches once it is back, and converge objects created, changed and deleted after the restart.
 * Runs on its own control plane: the run's shared one cannot be restarted from a test file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { informerWatchRestarts, reconcilePanics } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import {
  deployedIds,
  deployedModel,
  eventually,
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

const NS = 'fault-apiserver-restart';
/** Long enough for several failed reconnects, so the backoff between them is visible in the log. */
const DOWN_MS = 8_000;
const informerNames = Object.values(resources).map((r) => `${r.group}/${r.version}/${r.plural}@${NS}`);

describe('kube-apiserver restart under a running operator', () => {
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

  it('resumes its watches after the restart and converges what changed meanwhile', async () => {
    if (cluster === undefined || op === undefined)
      throw new Error('beforeAll did not start the control plane and the operator');
    const { client, plane } = cluster;
    const create = (kind: keyof typeof resources, obj: Parameters<typeof client.create>[2]): Promise<unknown> =>
      client.create(resources[kind], NS, obj);

    await create('predictionEndpoints', predictionEndpoint('main', { '1': 80, '2': 20 }));
    for (const [name, id] of [
      ['champion', '1'],
      ['challenger', '2'],
      ['idle', '3'],
    ] as const)
      await create('deployedModels', deployedModel(name, 'main', id));
    await create('registryServices', registryService('checkout'));
    await create('registryEndpoints', registryEndpoint('checkout-a', '10.0.0.1', 8443));
    await create('registryEndpoints', registryEndpoint('checkout-b', '10.0.0.2', 8443));
    await eventually(
      'the first objects Ready',
      async () => {
        const all = await Promise.all([
          get('predictionEndpoints', 'main'),
          get('deployedModels', 'idle'),
          get('registryServices', 'checkout'),
          get('registryEndpoints', 'checkout-b'),
        ]);
        return (
          all.every(readyAndCurrent) && deployedIds(all[0]).join() === '1,2,3' && listedEndpoints(all[2]).length === 2
        );
      },
      30_000,
    );

    const errorsBefore = await Promise.all(
      informerNames.map((resource) => metricValue(informerWatchRestarts, { resource, reason: 'error' })),
    );
    const logsBefore = op.logs.length;
    await plane.stopApiserver();
    const downSince = Date.now();
    // Every informer's watch has failed at least once: the operator noticed.
    await eventually(
      'every informer to see its watch fail',
      async () => {
        const errors = await Promise.all(
          informerNames.map((resource) => metricValue(informerWatchRestarts, { resource, reason: 'error' })),
        );
        return errors.every((n, i) => n > (errorsBefore[i] ?? 0));
      },
      15_000,
    );
    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    // Alive, and still ready: readiness means "caches synced", not "apiserver reachable" (health-server.ts).
    expect((await op.health('/healthz')).status).toBe(200);
    expect((await op.health('/readyz')).status).toBe(200);

    const downForMs = Date.now() - downSince;
    await plane.startApiserver();
    const apiserverReadyAt = Date.now();
    const outageLogs = op.logs.slice(logsBefore);

    // After the restart: a new endpoint with its model, a moved split, an undeploy, a new registry endpoint.
    await create('predictionEndpoints', predictionEndpoint('after-restart', { '7': 100 }));
    await create('deployedModels', deployedModel('after-restart-model', 'after-restart', '7'));
    await client.patch(
      resources.predictionEndpoints,
      NS,
      'main',
      { spec: { trafficSplit: { '1': 50, '2': 50 } } },
      { type: 'merge' },
    );
    // 'idle' has no traffic, so the operator releases its finalizer and the delete completes.
    expect(await client.delete(resources.deployedModels, NS, 'idle')).toBe(true);
    await create('registryEndpoints', registryEndpoint('checkout-c', '10.0.0.3', 9443));

    await eventually(
      'convergence after the restart',
      async () => {
        const [main, idle, after, afterModel, service, endpointC] = await Promise.all([
          get('predictionEndpoints', 'main'),
          get('deployedModels', 'idle'),
          get('predictionEndpoints', 'after-restart'),
          get('deployedModels', 'after-restart-model'),
          get('registryServices', 'checkout'),
          get('registryEndpoints', 'checkout-c'),
        ]);
        return (
          readyAndCurrent(main) &&
          main?.metadata.generation === 2 &&
          deployedIds(main).join() === '1,2' &&
          idle === undefined &&
          readyAndCurrent(after) &&
          deployedIds(after).join() === '7' &&
          readyAndCurrent(afterModel) &&
          readyAndCurrent(endpointC) &&
          listedEndpoints(service).join() === 'checkout-a:8443,checkout-b:8443,checkout-c:9443'
        );
      },
      60_000,
    );
    const convergedMs = Date.now() - apiserverReadyAt;

    // It backed off between reconnects rather than spinning: several failed attempts per informer, with growing delays.
    const deployedModelsInformer = informerNames[1] ?? '';
    const retries = outageLogs
      .filter((l) => l.informer === deployedModelsInformer && l.msg === 'watch failed')
      .map((l) => Number(l['retryInMs']));
    const restartLine = cluster.planeLog.find((l) => l.includes('ready again')) ?? '';
    console.info(
      `[apiserver-restart] stopped ${downForMs} ms, then (${restartLine}); reconnect delays of the deployedmodels watch: ${retries.join(', ')} ms; ` +
        `new and changed objects converged ${convergedMs} ms after the restarted apiserver was ready`,
    );
    expect(retries.length, JSON.stringify(outageLogs.slice(0, 20))).toBeGreaterThanOrEqual(2);
    expect(retries.length).toBeLessThan(10);
    // Growing, not necessarily monotonic to the end: a watch the restarting apiserver accepted and kept open ends the outage.
    expect(Math.max(...retries)).toBeGreaterThan(retries[0] ?? Infinity);

    // Never crashed, no reconcile blew up, and it still answers as ready.
    expect(op.exitedEarly()).toBeUndefined();
    expect(await metricValue(reconcilePanics)).toBe(0);
    expect((await op.health('/healthz')).status).toBe(200);
    expect((await op.health('/readyz')).status).toBe(200);
    // Its caches agree with the apiserver: the undeployed model is gone from them too.
    expect(
      op.operator
        .cached('deployedModels')
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['after-restart-model', 'challenger', 'champion']);
  });
});
