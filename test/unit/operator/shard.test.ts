import { afterEach, describe, expect, it } from 'vitest';
import { createShard } from '../../../src/operator/shard.js';
import { IdAssignments } from '../../../src/reconcilers/deployed-model-ids.js';
import { OrderingGrace } from '../../../src/reconcilers/ordering-grace.js';
import { flushMicrotasks, ManualClock } from '../../support/manual-clock.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { silentLogger } from '../../../src/base/logger.js';
import { reconcileTotal } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { deployedModel, endpoint, registryEndpoint, registryService } from '../reconcilers/fixtures.js';
import { RecordingApi, recordingEvents } from '../reconcilers/recording-api.js';

const FIN = 'prediction.endpoint-operator.dev/finalizer';
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

/** The shard's four controllers on a recording API, as start.ts runs them (informers, then controllers). */
function run(api: RecordingApi) {
  const { recorder, events } = recordingEvents();
  const shard = createShard({
    client: api.client(),
    namespace: 'ns',
    settings: { project: 'p', location: 'us-central1', reservedPrefixes: ['endpoint-operator.dev/'] },
    workers: 2,
    events: recorder,
    ids: new IdAssignments(),
    log: silentLogger,
    grace: new OrderingGrace(0),
    clock: new ManualClock(Date.parse('2026-01-01T00:00:10Z')),
  });
  const stop = new AbortController();
  const runs = [
    ...shard.allInformers().map((i) => i.run(stop.signal)),
    ...shard.controllers.map((c) => c.run(stop.signal)),
  ];
  stops.push(async () => {
    stop.abort();
    await Promise.all(runs);
  });
  return { shard, events };
}

/** Lets reconciles, their writes and the watch events they cause run to quiescence. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await flushMicrotasks();
    await new Promise((r) => setImmediate(r));
  }
}

const ready = (o: KubeObject | undefined) =>
  (
    o?.status as { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } | undefined
  )?.conditions?.find((c) => c.type === 'Ready');

describe('the shard on a recording API', () => {
  it('a new endpoint and model: one finalizer patch and one status write each, both Ready, then quiet', async () => {
    const api = new RecordingApi();
    api.create(
      'predictionendpoints',
      endpoint('ep', { displayName: 'ep', trafficSplit: { '1234567890': 100 } }).build(),
    );
    api.create('deployedmodels', deployedModel('dm', 'ep', { id: '1234567890' }).build());
    run(api);
    await settle();
    expect(ready(api.object('predictionendpoints', 'ns', 'ep'))).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
    expect(ready(api.object('deployedmodels', 'ns', 'dm'))).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(api.object('deployedmodels', 'ns', 'dm')?.metadata.finalizers).toEqual([FIN]);
    const writes = api.calls.filter((c) => c.startsWith('patch'));
    expect(writes.filter((c) => c.endsWith('ns/dm')).sort()).toEqual([
      'patch object deployedmodels ns/dm',
      'patch status deployedmodels ns/dm',
    ]);
    // The endpoint may write twice when the model's id lands after its first look (ordering), never more.
    expect(writes.filter((c) => c === 'patch object predictionendpoints ns/ep')).toHaveLength(1);
    expect(writes.filter((c) => c === 'patch status predictionendpoints ns/ep').length).toBeLessThanOrEqual(2);
    const before = api.calls.length;
    await settle();
    expect(api.calls.length).toBe(before);
  });

  it('a model being deleted while it has traffic: UndeployBlocked, finalizer kept; split moved away: undeployed and gone', async () => {
    const api = new RecordingApi();
    api.create(
      'predictionendpoints',
      endpoint('ep', { displayName: 'ep', trafficSplit: { '1234567890': 100 } }).build(),
    );
    api.create('deployedmodels', deployedModel('dm', 'ep', { id: '1234567890' }).build());
    const { events } = run(api);
    await settle();
    api.delete('deployedmodels', 'ns', 'dm');
    await settle();
    expect(ready(api.object('deployedmodels', 'ns', 'dm'))).toMatchObject({
      status: 'False',
      reason: 'UndeployBlocked',
    });
    expect(api.object('deployedmodels', 'ns', 'dm')?.metadata.finalizers).toEqual([FIN]);
    // It still serves its share meanwhile: its endpoint says so, and stays Ready.
    const ep = api.object('predictionendpoints', 'ns', 'ep');
    expect(ready(ep)).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect((ep?.status as { deployedModels: unknown[] }).deployedModels).toEqual([
      expect.objectContaining({ id: '1234567890', ready: 'True' }),
    ]);
    api.editSpec('predictionendpoints', 'ns', 'ep', { trafficSplit: {} });
    await settle();
    expect(api.object('deployedmodels', 'ns', 'dm')).toBeUndefined();
    expect(events).toContain('Normal Undeployed dm');
    // The endpoint no longer lists it, and can itself be deleted now.
    api.delete('predictionendpoints', 'ns', 'ep');
    await settle();
    expect(api.object('predictionendpoints', 'ns', 'ep')).toBeUndefined();
  });

  it('a model whose endpoint is missing reports EndpointNotFound and is reconciled again when the endpoint appears', async () => {
    const api = new RecordingApi();
    api.create('deployedmodels', deployedModel('dm', 'later').build());
    run(api);
    await settle();
    expect(ready(api.object('deployedmodels', 'ns', 'dm'))).toMatchObject({
      status: 'False',
      reason: 'EndpointNotFound',
    });
    api.create('predictionendpoints', endpoint('later').build());
    await settle();
    expect(ready(api.object('deployedmodels', 'ns', 'dm'))).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect((api.object('deployedmodels', 'ns', 'dm')?.status as { id?: string }).id).toMatch(/^[1-9]\d{9}$/);
  });

  it("a parent's label or status change does not re-run its children; a spec change does (generationChanged)", async () => {
    const api = new RecordingApi();
    api.create('predictionendpoints', endpoint('ep').build());
    api.create('deployedmodels', deployedModel('dm', 'ep').build());
    const { shard } = run(api);
    await settle();
    const models = shard.controllers.find((c) => c.name === 'deployedmodel@ns');
    const before = await metricValue(reconcileTotal, { controller: models?.name ?? '', result: 'success' });
    api.label('predictionendpoints', 'ns', 'ep', { team: 'risk' });
    await settle();
    expect(await metricValue(reconcileTotal, { controller: models?.name ?? '', result: 'success' })).toBe(before);
    api.editSpec('predictionendpoints', 'ns', 'ep', { displayName: 'renamed' }); // a spec change: children re-run
    await settle();
    const afterSpec = await metricValue(reconcileTotal, { controller: models?.name ?? '', result: 'success' });
    expect(afterSpec).toBeGreaterThan(before);
  });

  it('a RegistryEndpoint burst is coalesced: the service reconciles once, 1 s later, listing all of them', async () => {
    const api = new RecordingApi();
    api.create(
      'registryservices',
      registryService('svc', 'projects/demo-project/locations/europe-west4/namespaces/shop/services/payments').build(),
    );
    run(api);
    await settle();
    const writesBefore = api.calls.filter((c) => c === 'patch status registryservices ns/svc').length;
    for (let i = 0; i < 5; i++)
      api.create(
        'registryendpoints',
        registryEndpoint(
          `e${i}`,
          `projects/demo-project/locations/europe-west4/namespaces/shop/services/payments/endpoints/e${i}`,
        ).build(),
      );
    await settle();
    await new Promise((r) => setTimeout(r, 1_100));
    await settle();
    const status = api.object('registryservices', 'ns', 'svc')?.status as { endpoints?: unknown[] };
    expect(status.endpoints).toHaveLength(5);
    expect(api.calls.filter((c) => c === 'patch status registryservices ns/svc').length).toBe(writesBefore + 1);
  });

  it('withErrorReporting: a 500 is reported as ReconcileError and retried; once it passes, Ready', async () => {
    const api = new RecordingApi();
    api.refuse = { names: new Set(['ep']), status: 500 };
    api.create('predictionendpoints', endpoint('ep').build());
    run(api);
    await settle();
    expect(ready(api.object('predictionendpoints', 'ns', 'ep'))).toMatchObject({
      status: 'Unknown',
      reason: 'ReconcileError',
    });
    expect(ready(api.object('predictionendpoints', 'ns', 'ep'))?.message).toContain('failed ep');
    api.refuse = { names: new Set(), status: 500 };
    await new Promise((r) => setTimeout(r, 100)); // the backoff (5 ms, doubling) retries on its own
    await settle();
    expect(ready(api.object('predictionendpoints', 'ns', 'ep'))).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
  });

  it('withErrorReporting: a 403 is reported once as RequestRejected and not retried until the object changes', async () => {
    const api = new RecordingApi();
    api.refuse = { names: new Set(['ep']), status: 403 };
    api.create('predictionendpoints', endpoint('ep').build());
    run(api);
    await settle();
    expect(ready(api.object('predictionendpoints', 'ns', 'ep'))).toMatchObject({
      status: 'False',
      reason: 'RequestRejected',
    });
    const attempts = api.calls.filter((c) => c === 'patch object predictionendpoints ns/ep').length;
    expect(attempts).toBeLessThanOrEqual(2); // the first try, and the one the report's own write re-queued
    await new Promise((r) => setTimeout(r, 200));
    await settle();
    expect(api.calls.filter((c) => c === 'patch object predictionendpoints ns/ep')).toHaveLength(attempts);
    api.refuse = { names: new Set(), status: 403 };
    api.editSpec('predictionendpoints', 'ns', 'ep', { displayName: 'again' });
    await settle();
    expect(ready(api.object('predictionendpoints', 'ns', 'ep'))).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
  });
});
