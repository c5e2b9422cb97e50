/**
 * Large prediction bodies have their JSON work done on worker threads (json-worker-pool.ts, B6-fair):
 * the caller must not tell. Two gateways on the same endpoints, one doing all JSON work on its event
 * loop (the threshold beyond the body limit: the path every call took before), one with the default
 * threshold, get the same 1.2 MB calls on real sockets and must give the same answers: the same
 * predictions and deployedModelId from a KServe V1 and an Open Inference V2 model server, and the same
 * 400 for a body nested too deep, a number that overflows a double, a ragged tensor, and the same
 * refusal order when the endpoint accepts no traffic. The body's bytes are moved to the worker, not
 * copied, unless the call is sampled for the request log, which then still records them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDemoModelServer } from '../../../dev/models/demo/index.js';
import { gatewayJsonWorkerTasks } from '../../../src/gateway/json-worker-pool.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace } from '../../support/cluster.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  post,
  serviceManifest,
  setUpNamespace,
  startGateway,
  startModelServer,
  waitDeployed,
  type GatewayEnv,
  type Answer,
} from './harness.js';

const BODY_LIMIT = 1_500_000;
let env: GatewayEnv;
let v1Server: RunningDemoModelServer;
let v2Server: RunningDemoModelServer;
let onLoop: GatewayServer;
let offloaded: GatewayServer;
let onLoopUrl = '';
let offloadedUrl = '';
const offloadedLog = new CapturedLog();
const names: Record<string, string> = {};

const payment = { amount: 240, hourOfDay: 23, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 5 };
/** ~1.2 MB of instances, each different, so a mixed-up or truncated answer shows. */
const instances = Array.from({ length: 12_000 }, (_, i) => ({ ...payment, amount: i, hourOfDay: i % 24 }));
const BIG = JSON.stringify({ instances });

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('gateway-large'));
  v1Server = await startModelServer({ protocol: 'KServeV1', modelName: 'large-v1', version: 'v1' });
  v2Server = await startModelServer({ protocol: 'OpenInferenceV2', modelName: 'large-v2', version: 'v2' });
  const ns = env.namespace;
  await apply(ns, serviceManifest({ name: 'large-v1', protocol: 'KServeV1', ports: [v1Server.port] }));
  await apply(ns, serviceManifest({ name: 'large-v2', protocol: 'OpenInferenceV2', ports: [v2Server.port] }));
  await apply(
    ns,
    endpointManifest('big-v1', { '1': 100 }, [
      { name: 'big-v1-model', id: '1', backend: { service: 'large-v1', protocol: 'KServeV1' } },
    ]),
  );
  await apply(
    ns,
    endpointManifest('big-v2', { '2': 100 }, [
      { name: 'big-v2-model', id: '2', backend: { service: 'large-v2', protocol: 'OpenInferenceV2' } },
    ]),
  );
  await apply(ns, endpointManifest('closed', {}, []));
  await apply(
    ns,
    endpointManifest(
      'big-logged',
      { '3': 100 },
      [{ name: 'big-logged-model', id: '3', backend: { service: 'large-v1', protocol: 'KServeV1' } }],
      { predictRequestResponseLoggingConfig: { enabled: true, samplingRate: 1 } },
    ),
  );
  names.v1 = await waitDeployed(ns, 'big-v1', ['1']);
  names.v2 = await waitDeployed(ns, 'big-v2', ['2']);
  names.closed = await waitDeployed(ns, 'closed', []);
  names.logged = await waitDeployed(ns, 'big-logged', ['3']);
  ({ gateway: onLoop, url: onLoopUrl } = await startGateway(env, new CapturedLog().logger, {
    bodyLimitBytes: BODY_LIMIT,
    largeBodyBytes: BODY_LIMIT + 1,
  }));
  ({ gateway: offloaded, url: offloadedUrl } = await startGateway(env, offloadedLog.logger, {
    bodyLimitBytes: BODY_LIMIT,
  }));
}, 120_000);

afterAll(async () => {
  await onLoop?.close();
  await offloaded?.close();
  await v1Server?.close();
  await v2Server?.close();
  await env?.operator.stop();
});

/** The same call through both gateways: what each answered (status, Google error or Vertex body, deployed model header). */
async function both(name: string | undefined, body: string): Promise<[Answer, Answer]> {
  return Promise.all(
    [onLoopUrl, offloadedUrl].map((base) => post(`${base}/v1/${name ?? ''}:predict`, body)),
  ) as Promise<[Answer, Answer]>;
}

const tasks = (kind: 'request' | 'answer', outcome: string): Promise<number> =>
  metricValue(gatewayJsonWorkerTasks, { kind, outcome });

describe('a large :predict body on a worker thread', () => {
  for (const protocol of ['v1', 'v2'] as const) {
    it(`gets the answer the event loop gave, from a ${protocol === 'v1' ? 'KServe V1' : 'Open Inference V2'} model server`, async () => {
      expect(BIG.length).toBeGreaterThan(1_000_000);
      const [requestsBefore, answersBefore] = [await tasks('request', 'ok'), await tasks('answer', 'ok')];
      const [expected, got] = await both(names[protocol], BIG);
      expect(expected.status, expected.text.slice(0, 300)).toBe(200);
      expect(got.status, got.text.slice(0, 300)).toBe(200);
      expect(got.text).toBe(expected.text);
      expect(got.json.deployedModelId).toBe(protocol === 'v1' ? '1' : '2');
      expect(got.json.predictions).toHaveLength(instances.length);
      expect(got.headers['x-vertex-ai-deployed-model-id']).toBe(expected.headers['x-vertex-ai-deployed-model-id']);
      // The offloading gateway did the work on its workers (the other one never does at this size); the V2
      // answer, one flat tensor of scores, is under the 256 KiB threshold and stays on the event loop.
      expect(await tasks('request', 'ok')).toBe(requestsBefore + 1);
      expect(await tasks('answer', 'ok')).toBe(answersBefore + (protocol === 'v1' ? 1 : 0));
    }, 60_000);
  }

  const hostile: Record<string, [string, string]> = {
    'nested too deep': [
      `{"pad":"${'x'.repeat(400_000)}","instances":[${'['.repeat(200)}1${']'.repeat(200)}]}`,
      'nested more than 100 levels deep',
    ],
    'holding a number that overflows a double': [
      BIG.replace('"amount":7,', '"amount":1e400,'),
      'instances[7].amount: the number is too large for a 64-bit float',
    ],
    malformed: [BIG.slice(0, -2), 'Invalid JSON payload received.'],
  };
  for (const [what, [body, message]] of Object.entries(hostile)) {
    it(`refuses a large body ${what} with the event loop's 400`, async () => {
      expect(body.length).toBeGreaterThan(256 * 1024);
      const refusedBefore = await tasks('request', 'refused');
      const [expected, got] = await both(names.v1, body);
      expect(expected.status).toBe(400);
      expect(got.status).toBe(400);
      expect(got.json).toEqual(expected.json);
      expect(got.json.error.status).toBe('INVALID_ARGUMENT');
      expect(got.json.error.message).toContain(message);
      expect(await tasks('request', 'refused')).toBe(refusedBefore + 1);
    }, 60_000);
  }

  it("refuses a V2 instance list that is not a tensor with the event loop's 400 naming the deployed model", async () => {
    const ragged = JSON.stringify({ instances: [...instances.slice(0, 6_000), [1, 2]] });
    const [expected, got] = await both(names.v2, ragged);
    expect(expected.status).toBe(400);
    expect(got.json).toEqual(expected.json);
    expect(got.json.error.message).toContain('deployed model 2');
  }, 60_000);

  it('still records the request of a large call sampled for the request log (its bytes copied to the worker, not moved)', async () => {
    const [expected, got] = await both(names.logged, BIG);
    expect(got.status, got.text.slice(0, 300)).toBe(200);
    expect(got.text).toBe(expected.text);
    const record = offloadedLog.records.findLast(
      (r) => r.msg === 'prediction' && r.endpoint === 'big-logged' && r.code === 200,
    );
    expect(record?.requestTruncated).toBe(true);
    expect(BIG.startsWith(record?.request as string)).toBe(true);
    expect((record?.request as string).length).toBeGreaterThan(1000);
    expect(got.text.startsWith(record?.response as string)).toBe(true);
  }, 60_000);

  it('keeps the refusal order on an endpoint without traffic: a bad body is 400, a good one 400 FAILED_PRECONDITION', async () => {
    const [badExpected, bad] = await both(names.closed, BIG.slice(0, -2));
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual(badExpected.json);
    const [goodExpected, good] = await both(names.closed, BIG);
    expect(good.json).toEqual(goodExpected.json);
    expect(good.json.error.status).toBe('FAILED_PRECONDITION');
  }, 60_000);
});
