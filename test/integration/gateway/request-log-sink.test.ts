/**
 * Sampled calls as KServe-compatible CloudEvents (HTTP binary mode) to a loopback sink: the sampled
 * share within the binomial bound, one ce-id per request/response pair, the documented attributes;
 * and a sink that hangs or refuses costs no call its latency or success, its drops counted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDemoModelServer } from '../../../dev/models/demo/index.js';
import { freeLoopbackPort } from '../../../dev/cluster/ports.js';
import { CE_REQUEST_TYPE, CE_RESPONSE_TYPE, eventsDropped } from '../../../src/gateway/cloudevents-sink.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace } from '../../support/cluster.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  eventually,
  post,
  serviceManifest,
  setUpNamespace,
  startGateway,
  startModelServer,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

interface ReceivedEvent {
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A CloudEvents sink on loopback: records, hangs (never answers) or is gone. */
class Sink {
  readonly events: ReceivedEvent[] = [];
  private readonly server: http.Server;

  constructor(private readonly mode: 'record' | 'hang') {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.mode === 'hang') return;
        this.events.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(202).end();
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let env: GatewayEnv;
let model: RunningDemoModelServer;
let sampled = '';
let always = '';
const gateways: GatewayServer[] = [];
const sinks: Sink[] = [];
const instance = { amount: 35, hourOfDay: 12, foreignMerchant: 0, cardPresent: 1, transactionsLast24h: 2 };
const RATE = 0.25;

async function gatewayWithSink(
  sink: string,
  sinkQueue: { maxEvents?: number; timeoutMs?: number } = {},
): Promise<string> {
  const { gateway, url } = await startGateway(env, new CapturedLog().logger, {
    requestLog: { sink, sinkQueue, maxRecordsPerSecond: 10_000 },
  });
  gateways.push(gateway);
  return url;
}

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('request-log-sink'));
  model = await startModelServer({ protocol: 'KServeV1', modelName: 'fraud-v1', version: 'v1' });
  await apply(env.namespace, serviceManifest({ name: 'fraud-v1', protocol: 'KServeV1', ports: [model.port] }));
  await apply(
    env.namespace,
    endpointManifest(
      'sampled',
      { '3': 100 },
      [{ name: 'sampled-model', id: '3', backend: { service: 'fraud-v1', protocol: 'KServeV1' } }],
      { predictRequestResponseLoggingConfig: { enabled: true, samplingRate: RATE } },
    ),
  );
  await apply(
    env.namespace,
    endpointManifest(
      'always',
      { '4': 100 },
      [{ name: 'always-model', id: '4', backend: { service: 'fraud-v1', protocol: 'KServeV1' } }],
      { predictRequestResponseLoggingConfig: { enabled: true, samplingRate: 1 } },
    ),
  );
  sampled = await waitDeployed(env.namespace, 'sampled', ['3']);
  always = await waitDeployed(env.namespace, 'always', ['4']);
});

afterAll(async () => {
  for (const s of sinks) await s.close();
  for (const g of gateways) await g.close();
  await model?.close();
  await env?.operator.stop();
});

describe('a recording sink', () => {
  it("receives the sampled share of calls as request/response pairs with one ce-id and KServe's attributes", async () => {
    const sink = new Sink('record');
    sinks.push(sink);
    const base = await gatewayWithSink(await sink.start());
    const calls = 200;
    for (let i = 0; i < calls; i++)
      expect((await post(`${base}/v1/${sampled}:predict`, { instances: [instance] })).status).toBe(200);
    // Delivered once the count holds still and every id has both halves.
    let last = -1;
    const byId = await eventually(
      'every sampled call delivered',
      async () => {
        await new Promise((r) => setTimeout(r, 300));
        const count = sink.events.length;
        const groups = new Map<string, ReceivedEvent[]>();
        for (const e of sink.events)
          groups.set(String(e.headers['ce-id']), [...(groups.get(String(e.headers['ce-id'])) ?? []), e]);
        const settled = count === last && [...groups.values()].every((g) => g.length === 2);
        last = count;
        return settled ? groups : undefined;
      },
      60_000,
    );
    // Binomial(200, 0.25): mean 50, sd 6.1; ±5 sd fails once in millions of runs.
    expect(byId.size).toBeGreaterThanOrEqual(19);
    expect(byId.size).toBeLessThanOrEqual(81);
    for (const [id, pair] of byId) {
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const request = pair.find((e) => e.headers['ce-type'] === CE_REQUEST_TYPE);
      const response = pair.find((e) => e.headers['ce-type'] === CE_RESPONSE_TYPE);
      expect(request, id).toBeDefined();
      expect(response, id).toBeDefined();
      for (const e of pair) {
        expect(e.headers).toMatchObject({
          'ce-specversion': '1.0',
          'ce-namespace': env.namespace,
          'ce-inferenceservicename': 'sampled',
          'ce-component': 'predictor',
          'ce-endpoint': '3',
          'ce-deployedmodel': '3',
          'ce-predictionendpoint': sampled,
          'ce-source': `/v1/${sampled}:predict`,
        });
        expect(e.headers['content-type']).toMatch(/^application\/json/);
        expect(Number.isNaN(Date.parse(String(e.headers['ce-time'])))).toBe(false);
      }
      expect(JSON.parse(request?.body ?? '')).toEqual({ instances: [instance] });
      expect(JSON.parse(response?.body ?? '')).toMatchObject({ deployedModelId: '3' });
    }
  });
});

describe('a sink that fails', () => {
  it('hanging: costs the calls no latency and no success; what does not fit is dropped and counted', async () => {
    const sink = new Sink('hang');
    sinks.push(sink);
    const base = await gatewayWithSink(await sink.start(), { maxEvents: 10, timeoutMs: 30_000 });
    const before = await metricValue(eventsDropped, { reason: 'queue_full' });
    let slowest = 0;
    for (let i = 0; i < 40; i++) {
      const started = performance.now();
      expect((await post(`${base}/v1/${always}:predict`, { instances: [instance] })).status).toBe(200);
      slowest = Math.max(slowest, performance.now() - started);
    }
    // A call that waited for the sink would take its 30 s deadline.
    expect(slowest).toBeLessThan(5_000);
    // 80 events; at most 10 queued and one batch (the 10 it took) in flight.
    expect((await metricValue(eventsDropped, { reason: 'queue_full' })) - before).toBeGreaterThanOrEqual(60);
  });

  it('refusing connections: every call answers, and the failed deliveries are counted', async () => {
    const base = await gatewayWithSink(`http://127.0.0.1:${await freeLoopbackPort()}/`, { timeoutMs: 5_000 });
    const before = await metricValue(eventsDropped, { reason: 'send_failed' });
    for (let i = 0; i < 20; i++)
      expect((await post(`${base}/v1/${always}:predict`, { instances: [instance] })).status).toBe(200);
    await eventually(
      '40 failed deliveries counted',
      async () => (await metricValue(eventsDropped, { reason: 'send_failed' })) - before >= 40,
      60_000,
    );
  });
});
