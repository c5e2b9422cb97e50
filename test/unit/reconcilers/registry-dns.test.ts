import { afterEach, describe, expect, it } from 'vitest';
import { createShard } from '../../../src/operator/shard.js';
import { IdAssignments } from '../../../src/reconcilers/deployed-model-ids.js';
import { OrderingGrace } from '../../../src/reconcilers/ordering-grace.js';
import type { EventRecorder } from '../../../src/runtime/events.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { silentLogger } from '../../../src/base/logger.js';
import { registryEndpoint, registryService } from './fixtures.js';
import { RecordingApi } from './recording-api.js';

const SVC = 'projects/my-shop/locations/us-east1/namespaces/shop/services/checkout';
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

function run(api: RecordingApi): void {
  const recorder = { record: async () => true } as unknown as EventRecorder;
  const shard = createShard({
    client: api.client(),
    namespace: 'ns',
    settings: { project: 'p', location: 'us-central1', reservedPrefixes: ['endpoint-operator.dev/'] },
    workers: 2,
    events: recorder,
    ids: new IdAssignments(),
    log: silentLogger,
    grace: new OrderingGrace(0),
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
}

const ready = (o: KubeObject | undefined) =>
  (
    o?.status as { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } | undefined
  )?.conditions?.find((c) => c.type === 'Ready');

async function until<T>(what: string, check: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function seed(api: RecordingApi): void {
  api.create(
    'registryservices',
    registryService('checkout', SVC)
      .spec({ dns: { enabled: true } })
      .build(),
  );
  api.create(
    'registryendpoints',
    registryEndpoint('checkout-a', `${SVC}/endpoints/a`, { address: '10.0.0.1', port: 8080 }).build(),
  );
  api.create(
    'registryendpoints',
    registryEndpoint('checkout-b', `${SVC}/endpoints/b`, { address: '2001:db8::2', port: 8080 }).build(),
  );
}

describe('the DNS projection in the shard, on a recording API', () => {
  it('creates the Service and one slice per family, reports it in Ready, then writes nothing more', async () => {
    const api = new RecordingApi();
    seed(api);
    run(api);
    const r = await until('Ready with DNS', () => {
      const c = ready(api.object('registryservices', 'ns', 'checkout'));
      return c?.message.includes('in cluster DNS') === true ? c : undefined;
    });
    expect(r).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
      message: '2 ready endpoint(s); in cluster DNS as checkout.ns.svc',
    });
    const writes = (): string[] =>
      api.calls.filter((c) => /^(create|replace|delete) (services|endpointslices)/.test(c));
    expect(writes().sort()).toEqual([
      'create endpointslices ns/checkout-ipv4-8080-0',
      'create endpointslices ns/checkout-ipv6-8080-0',
      'create services ns/checkout',
    ]);
    // The endpoint watch's own (coalesced) reconciles find nothing to change.
    await new Promise((r) => setTimeout(r, 1300));
    expect(writes()).toHaveLength(3);
  });

  it('reports a refused write (403) as Ready=False, RequestRejected, naming spec.dns, and does not retry it', async () => {
    const api = new RecordingApi();
    api.refuseCreate.add('services');
    seed(api);
    run(api);
    const r = await until('RequestRejected', () => {
      const c = ready(api.object('registryservices', 'ns', 'checkout'));
      return c?.reason === 'RequestRejected' ? c : undefined;
    });
    expect(r).toMatchObject({ status: 'False', message: expect.stringContaining('spec.dns: the API server refused') });
    const attempts = (): number => api.calls.filter((c) => c === 'create services ns/checkout').length;
    const seen = attempts();
    await new Promise((r) => setTimeout(r, 1300));
    // Only the endpoints' coalesced re-enqueue may try once more; no backoff loop.
    expect(attempts()).toBeLessThanOrEqual(seen + 1);
  });
});
