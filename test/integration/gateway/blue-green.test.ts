/**
 * A blue/green switch through the gateway under a steady stream of calls, with real model servers
 * behind two Services: spec.trafficSplit {blue: 100} → {blue: 0, green: 100} while green has no ready
 * endpoint. The split in effect (status.trafficSplit) stays on blue until green is deployed, then
 * moves; not one call fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDemoModelServer } from '../../../dev/models/demo/index.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace } from '../../support/cluster.js';
import { readyOf } from '../reconcilers/harness.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  eventually,
  getJson,
  post,
  serviceManifest,
  setUpNamespace,
  startGateway,
  startModelServer,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

const instance = { amount: 35, hourOfDay: 12, foreignMerchant: 0, cardPresent: 1, transactionsLast24h: 2 };
const models = [
  { name: 'blue-model', id: '1', backend: { service: 'blue', protocol: 'KServeV1' as const } },
  { name: 'green-model', id: '2', backend: { service: 'green', protocol: 'KServeV1' as const } },
];

let env: GatewayEnv;
let blue: RunningDemoModelServer;
let green: RunningDemoModelServer;
let gateway: GatewayServer;
let base = '';

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('gateway-blue-green'));
  blue = await startModelServer({ protocol: 'KServeV1', modelName: 'blue', version: 'v1' });
  green = await startModelServer({ protocol: 'KServeV1', modelName: 'green', version: 'v1' });
  ({ gateway, url: base } = await startGateway(env, new CapturedLog().logger));
});

afterAll(async () => {
  await gateway?.close();
  await blue?.close();
  await green?.close();
  await env?.operator.stop();
});

describe('a blue/green switch', () => {
  it('keeps serving blue until green is deployed, then moves, without one failed call', async () => {
    const ns = env.namespace;
    await apply(ns, serviceManifest({ name: 'blue', protocol: 'KServeV1', ports: [blue.port] }));
    // green's server runs, but its endpoint is not ready yet: the model is not deployed (BackendUnavailable).
    await apply(ns, serviceManifest({ name: 'green', protocol: 'KServeV1', ports: [green.port] }, [false]));
    await apply(ns, endpointManifest('bg', { '1': 100 }, models));
    const name = await waitDeployed(ns, 'bg', ['1', '2']);
    await eventually(
      'blue in effect',
      async () => JSON.stringify((await getJson(ns, 'predictionendpoint/bg')).status?.trafficSplit) === '{"1":100}',
    );

    const answered: string[] = [];
    const failures: string[] = [];
    let running = true;
    const stream = (async () => {
      while (running) {
        const r = await post(`${base}/v1/${name}:predict`, { instances: [instance] });
        if (r.status === 200) answered.push(String(r.json.deployedModelId));
        else failures.push(`${r.status} ${r.text}`);
      }
    })();
    try {
      await eventually('calls flowing', () => answered.length >= 20);
      await apply(ns, endpointManifest('bg', { '1': 0, '2': 100 }, models));
      const pending = await eventually('the switch pending', async () => {
        const ep = await getJson(ns, 'predictionendpoint/bg');
        const r = readyOf(ep);
        return r?.reason === 'TrafficSplitPending' && r.observedGeneration === ep.metadata.generation ? ep : undefined;
      });
      expect(pending.status?.trafficSplit).toEqual({ '1': 100 });
      const beforeReady = answered.length;
      await eventually('more calls while pending', () => answered.length >= beforeReady + 50);
      expect(answered.every((id) => id === '1')).toBe(true);

      await apply(ns, serviceManifest({ name: 'green', protocol: 'KServeV1', ports: [green.port] }, [true]));
      await eventually(
        'green answers',
        () => answered.slice(-20).length === 20 && answered.slice(-20).every((id) => id === '2'),
        30_000,
      );
      expect((await getJson(ns, 'predictionendpoint/bg')).status?.trafficSplit).toEqual({ '1': 0, '2': 100 });
    } finally {
      running = false;
      await stream;
    }
    expect(failures).toEqual([]);
    expect(answered.filter((id) => id === '1').length).toBeGreaterThan(70);
  });
});
