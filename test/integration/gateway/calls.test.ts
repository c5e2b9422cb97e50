/**
 * The gateway answering Vertex AI's REST calls on a real apiserver, routed to real model servers on
 * loopback: :predict, :explain and :rawPredict for KServe V1 and Open Inference V2, the documented
 * errors, sticky keys, request/response logging and metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  explain,
  FRAUD_MODEL_VERSIONS,
  predict,
  toPayment,
  type RunningDemoModelServer,
} from '../../../dev/models/demo/index.js';
import { GoogleApiError } from '../../../src/gateway/google-errors.js';
import type { GatewayPlugin, GatewayServer } from '../../../src/gateway/server.js';
import { resources } from '../../../src/api/kind-bindings.js';
import { gatewayRequests } from '../../../src/gateway/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace } from '../../support/cluster.js';
import http from 'node:http';
import { request } from 'undici';
import {
  apply,
  CapturedLog,
  client,
  endpointManifest,
  eventually,
  listenInHost,
  post,
  serviceManifest,
  setUpNamespace,
  startGateway,
  startModelServer,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

let env: GatewayEnv;
let v1Server: RunningDemoModelServer;
let v2Server: RunningDemoModelServer;
let gateway: GatewayServer;
let base = '';
const names: Record<string, string> = {};
const log = new CapturedLog();

const risky = { amount: 1800, hourOfDay: 2, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 9 };
const usual = { amount: 35, hourOfDay: 12, foreignMerchant: 0, cardPresent: 1, transactionsLast24h: 2 };

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('gateway-calls'));
  v1Server = await startModelServer({ protocol: 'KServeV1', modelName: 'fraud-v1', version: 'v1' });
  v2Server = await startModelServer({ protocol: 'OpenInferenceV2', modelName: 'fraud-v2', version: 'v2' });
  const ns = env.namespace;
  await apply(ns, serviceManifest({ name: 'fraud-v1', protocol: 'KServeV1', ports: [v1Server.port] }));
  await apply(ns, serviceManifest({ name: 'fraud-v2', protocol: 'OpenInferenceV2', ports: [v2Server.port] }));
  await apply(
    ns,
    endpointManifest('fraud', { '1': 70, '2': 30 }, [
      { name: 'fraud-champion', id: '1', backend: { service: 'fraud-v1', protocol: 'KServeV1' } },
      { name: 'fraud-challenger', id: '2', backend: { service: 'fraud-v2', protocol: 'OpenInferenceV2' } },
    ]),
  );
  await apply(
    ns,
    endpointManifest(
      'only-v1',
      { '11': 100 },
      [{ name: 'only-v1-model', id: '11', backend: { service: 'fraud-v1', protocol: 'KServeV1' } }],
      { predictRequestResponseLoggingConfig: { enabled: true, samplingRate: 1 } },
    ),
  );
  await apply(
    ns,
    endpointManifest('only-v2', { '22': 100 }, [
      { name: 'only-v2-model', id: '22', backend: { service: 'fraud-v2', protocol: 'OpenInferenceV2' } },
    ]),
  );
  await apply(ns, endpointManifest('closed', {}, []));
  await apply(ns, endpointManifest('recorded', { '9': 100 }, [{ name: 'recorded-model', id: '9' }]));
  await apply(
    ns,
    endpointManifest('nowhere', { '8': 100 }, [
      { name: 'nowhere-model', id: '8', backend: { service: 'missing-service', protocol: 'KServeV1' } },
    ]),
  );
  names.fraud = await waitDeployed(ns, 'fraud', ['1', '2']);
  names.v1 = await waitDeployed(ns, 'only-v1', ['11']);
  names.v2 = await waitDeployed(ns, 'only-v2', ['22']);
  names.closed = await waitDeployed(ns, 'closed', []);
  names.recorded = await waitDeployed(ns, 'recorded', ['9']);
  names.nowhere = await waitDeployed(ns, 'nowhere', ['8']);
  // A route plugin as the registry lookup is mounted: it shares the gateway's informers.
  const plugin: GatewayPlugin = (app, ctx) => {
    const pes = ctx.informers.informer(resources.predictionEndpoints, env.namespace);
    app.get('/v1/probe/endpoints', async () => ({ count: pes.list(env.namespace).length }));
    app.get('/v1/probe/refused', async () => {
      throw new GoogleApiError('PERMISSION_DENIED', 'not for you');
    });
  };
  ({ gateway, url: base } = await startGateway(env, log.logger, {}, [plugin]));
});

afterAll(async () => {
  await gateway?.close();
  await v1Server?.close();
  await v2Server?.close();
  await env?.operator.stop();
});

const call = (name: string | undefined, method: string): string => `${base}/v1/${name ?? ''}:${method}`;

describe(':predict', () => {
  it('answers from a KServe V1 server with Vertex AI field names', async () => {
    const r = await post(call(names.v1, 'predict'), {
      instances: [risky, usual],
      parameters: { ignored: true },
      unknownField: 1,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      predictions: [
        predict(FRAUD_MODEL_VERSIONS.v1, toPayment(risky, 'i')),
        predict(FRAUD_MODEL_VERSIONS.v1, toPayment(usual, 'i')),
      ],
      deployedModelId: '11',
      model: 'projects/demo-project/locations/europe-west4/models/only-v1-model',
      modelDisplayName: 'only-v1-model display',
      modelVersionId: '1',
    });
    expect(r.json.predictions[0].label).toBe('fraud');
    expect(r.headers['x-vertex-ai-deployed-model-id']).toBe('11');
  });

  it('answers from an Open Inference V2 server through the tensor mapping (object and array instances)', async () => {
    const objects = await post(call(names.v2, 'predict'), { instances: [risky, usual] });
    expect(objects.status, objects.text).toBe(200);
    expect(objects.json.predictions).toEqual([
      predict(FRAUD_MODEL_VERSIONS.v2, toPayment(risky, 'i')),
      predict(FRAUD_MODEL_VERSIONS.v2, toPayment(usual, 'i')),
    ]);
    expect(objects.json.deployedModelId).toBe('22');
    const arrays = await post(`${call(names.v2, 'predict')}?alt=json&%24alt=json`, { instances: [[1800, 2, 1, 0, 9]] });
    expect(arrays.status, arrays.text).toBe(200);
    expect(arrays.json.predictions).toEqual([predict(FRAUD_MODEL_VERSIONS.v2, toPayment(risky, 'i'))]);
  });

  it('passes a model server refusal on as INVALID_ARGUMENT naming the deployed model', async () => {
    const r = await post(call(names.v1, 'predict'), { instances: [{ amount: 1 }] });
    expect(r.status).toBe(400);
    expect(r.json.error.status).toBe('INVALID_ARGUMENT');
    expect(r.json.error.message).toMatch(/Deployed model 11 \(only-v1-model\).*instances\[0\]\.hourOfDay is missing/);
  });
});

describe(':explain', () => {
  it('returns per-feature attributions from both protocols', async () => {
    for (const [name, id, version] of [
      [names.v1, '11', 'v1'],
      [names.v2, '22', 'v2'],
    ] as const) {
      const r = await post(call(name, 'explain'), { instances: [risky] });
      expect(r.status, r.text).toBe(200);
      expect(r.json.deployedModelId).toBe(id);
      expect(r.json.explanations).toEqual([explain(FRAUD_MODEL_VERSIONS[version], toPayment(risky, 'i'))]);
      expect(r.json.predictions).toEqual([predict(FRAUD_MODEL_VERSIONS[version], toPayment(risky, 'i'))]);
    }
  });

  it('explains with the deployed model a deployedModelId names, whatever the split', async () => {
    for (let i = 0; i < 10; i++) {
      const r = await post(call(names.fraud, 'explain'), { instances: [usual], deployedModelId: '2' });
      expect(r.json.deployedModelId).toBe('2');
      expect(r.json.explanations).toEqual([explain(FRAUD_MODEL_VERSIONS.v2, toPayment(usual, 'i'))]);
    }
    const unknown = await post(call(names.fraud, 'explain'), { instances: [usual], deployedModelId: '77' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toEqual({
      code: 404,
      status: 'NOT_FOUND',
      message: `Deployed model 77 not found in endpoint ${names.fraud}.`,
    });
  });
});

describe(':rawPredict', () => {
  it('passes the body to the model server unchanged and names the deployed model in a header', async () => {
    const v1 = await post(call(names.v1, 'rawPredict'), { instances: [usual] });
    expect(v1.status).toBe(200);
    expect(v1.json).toEqual({ predictions: [predict(FRAUD_MODEL_VERSIONS.v1, toPayment(usual, 'i'))] });
    expect(v1.headers['x-vertex-ai-deployed-model-id']).toBe('11');
    const infer = {
      id: 'req-7',
      inputs: [{ name: 'batch', shape: [1, 5], datatype: 'FP64', data: [35, 12, 0, 1, 2] }],
    };
    const v2 = await post(call(names.v2, 'rawPredict'), infer);
    expect(v2.status).toBe(200);
    expect(v2.json.id).toBe('req-7');
    expect(v2.json.outputs[0]).toEqual({
      name: 'fraudProbability',
      shape: [1],
      datatype: 'FP64',
      data: [predict(FRAUD_MODEL_VERSIONS.v2, toPayment(usual, 'i')).fraudProbability],
    });
    expect(v2.headers['x-vertex-ai-deployed-model-id']).toBe('22');
    const refused = await post(call(names.v2, 'rawPredict'), 'not json at all', { 'content-type': 'text/plain' });
    expect(refused.status).toBe(400); // the model server's own answer, unchanged
    expect(refused.json.error).toMatch(/invalid JSON/);
  });
});

describe('errors in Google JSON error form', () => {
  it.each([
    [
      'an empty split',
      () => post(call(names.closed, 'predict'), { instances: [usual] }),
      400,
      'FAILED_PRECONDITION',
      /accepts no traffic: its traffic split is empty/,
    ],
    [
      'an unknown endpoint',
      () =>
        post(call('projects/demo-project/locations/europe-west4/endpoints/nope', 'predict'), { instances: [usual] }),
      404,
      'NOT_FOUND',
      /Endpoint projects\/demo-project\/locations\/europe-west4\/endpoints\/nope not found/,
    ],
    [
      'malformed JSON',
      () => post(call(names.fraud, 'predict'), '{"instances": [1,'),
      400,
      'INVALID_ARGUMENT',
      /Invalid JSON payload received/,
    ],
    [
      'missing instances',
      () => post(call(names.fraud, 'predict'), { parameters: {} }),
      400,
      'INVALID_ARGUMENT',
      /instances is required/,
    ],
    [
      'an oversized body',
      () => post(call(names.fraud, 'predict'), { instances: [usual], padding: 'x'.repeat(70 * 1024) }),
      413,
      'INVALID_ARGUMENT',
      /exceeds the limit: 65536 bytes/,
    ],
    [
      'an unknown method',
      () => post(call(names.fraud, 'serverStreamingPredict'), { instances: [usual] }),
      404,
      'NOT_FOUND',
      /the calls are :predict, :explain and :rawPredict/,
    ],
    [
      'alt=media',
      () => post(`${call(names.fraud, 'predict')}?alt=media`, { instances: [usual] }),
      400,
      'INVALID_ARGUMENT',
      /system parameter "alt"/,
    ],
    [
      'a deployed model without a backend',
      () => post(call(names.recorded, 'predict'), { instances: [usual] }),
      400,
      'FAILED_PRECONDITION',
      /Deployed model 9 cannot be called: .*has no spec.backend/,
    ],
    [
      'a backend Service that does not exist',
      () => post(call(names.nowhere, 'predict'), { instances: [usual] }),
      503,
      'UNAVAILABLE',
      /Deployed model 8 \(nowhere-model\) is unavailable: Service .*\/missing-service does not exist/,
    ],
  ])('%s', async (_what, send, code, status, message) => {
    const r = await send();
    expect(r.status, r.text).toBe(code);
    expect(r.json.error.code).toBe(code);
    expect(r.json.error.status).toBe(status);
    expect(r.json.error.message).toMatch(message);
  });

  it('a model server that does not answer: 503 naming the deployed model, then 503 at once (ejected)', async () => {
    const ns = env.namespace;
    const dead = await startModelServer({ protocol: 'KServeV1', modelName: 'gone', version: 'v1' });
    await dead.close();
    await apply(ns, serviceManifest({ name: 'gone', protocol: 'KServeV1', ports: [dead.port] }));
    await apply(
      ns,
      endpointManifest('dead', { '7': 100 }, [
        { name: 'dead-model', id: '7', backend: { service: 'gone', protocol: 'KServeV1' } },
      ]),
    );
    const name = await waitDeployed(ns, 'dead', ['7']);
    let r = await post(call(name, 'predict'), { instances: [usual] });
    for (let i = 0; i < 50 && r.json?.error?.message?.includes('has no ready endpoint'); i++)
      r = await post(call(name, 'predict'), { instances: [usual] });
    expect(r.status, r.text).toBe(503);
    expect(r.json.error.message).toMatch(
      /Deployed model 7 \(dead-model\): no model server endpoint accepted a connection: .*ECONNREFUSED/,
    );
  });
});

describe('a model server that hangs', () => {
  it('is answered 504 naming the deployed model after the upstream timeout, and a client that leaves cancels the call', async () => {
    const ns = env.namespace;
    const closed: number[] = [];
    const received: number[] = [];
    // Reads the request and never answers; records when the gateway gives up on it.
    const hang = http.createServer((req) => {
      received.push(Date.now());
      req.resume();
      req.socket.once('close', () => closed.push(Date.now()));
    });
    const port = await listenInHost(hang);
    await apply(ns, serviceManifest({ name: 'hang', protocol: 'KServeV1', ports: [port] }));
    await apply(
      ns,
      endpointManifest('slow', { '6': 100 }, [
        { name: 'slow-model', id: '6', backend: { service: 'hang', protocol: 'KServeV1' } },
      ]),
    );
    const name = await waitDeployed(ns, 'slow', ['6']);
    const { gateway: impatient, url } = await startGateway(env, log.logger, { upstreamTimeoutMs: 500 });
    try {
      const started = Date.now();
      const r = await post(`${url}/v1/${name}:predict`, { instances: [usual] });
      expect(r.status, r.text).toBe(504);
      expect(r.json.error.status).toBe('DEADLINE_EXCEEDED');
      expect(r.json.error.message).toMatch(
        /^Deployed model 6 \(slow-model\): no answer from http:\/\/\d+\.\d+\.\d+\.\d+:\d+ within 500 ms/,
      );
      expect(Date.now() - started).toBeLessThan(5000);

      // A client that goes away: the gateway's call to the model server is cancelled (its connection closes).
      const before = closed.length;
      const abort = new AbortController();
      const pending = request(`${base}/v1/${name}:predict`, {
        method: 'POST',
        dispatcher: client,
        body: JSON.stringify({ instances: [usual] }),
        headers: { 'content-type': 'application/json' },
        signal: abort.signal,
      });
      await eventually('the model server received the call', () => received.length >= 2);
      abort.abort();
      await expect(pending).rejects.toThrow();
      await eventually('the model server call was cancelled', () => closed.length > before, 5000);
    } finally {
      await impatient.close();
      hang.closeAllConnections();
      hang.close();
    }
  });
});

describe('route plugins', () => {
  it('serve next to the prediction calls from the same informer caches, with Google errors and 404s', async () => {
    const count = await request(`${base}/v1/probe/endpoints`, { dispatcher: client });
    expect(count.statusCode).toBe(200);
    expect(await count.body.json()).toEqual({ count: 8 });
    const refused = await request(`${base}/v1/probe/refused`, { dispatcher: client });
    expect(refused.statusCode).toBe(403);
    expect(await refused.body.json()).toEqual({
      error: { code: 403, status: 'PERMISSION_DENIED', message: 'not for you' },
    });
    const missing = await request(`${base}/v1/projects/p/locations/l/models/m`, { dispatcher: client });
    expect(missing.statusCode).toBe(404);
    expect(((await missing.body.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND');
  });
});

describe('sticky keys', () => {
  it('pin a caller to one deployed model; different callers follow the split', async () => {
    const byKey = new Map<string, Set<string>>();
    for (let k = 0; k < 40; k++) {
      for (let i = 0; i < 3; i++) {
        const r = await post(
          call(names.fraud, 'predict'),
          { instances: [usual] },
          { 'x-eo-sticky-key': `customer-${k}` },
        );
        const set = byKey.get(`customer-${k}`) ?? new Set();
        set.add(r.json.deployedModelId as string);
        byKey.set(`customer-${k}`, set);
      }
    }
    expect([...byKey.values()].every((s) => s.size === 1)).toBe(true);
    const models = new Set([...byKey.values()].flatMap((s) => [...s]));
    expect(models).toEqual(new Set(['1', '2']));
  });
});

describe('observability', () => {
  it('writes sampled calls as structured records with request and response', async () => {
    await post(call(names.v1, 'predict'), { instances: [risky] });
    const record = log.records.findLast(
      (r) => r.msg === 'prediction' && r.endpoint === 'only-v1' && r.method === 'predict' && r.code === 200,
    );
    expect(record).toMatchObject({ namespace: env.namespace, endpointName: names.v1, deployedModelId: '11' });
    expect(JSON.parse(record?.request as string)).toEqual({ instances: [risky] });
    expect(JSON.parse(record?.response as string).deployedModelId).toBe('11');
    expect(typeof record?.latencyMs).toBe('number');
    // The endpoint without logging config writes none.
    expect(log.records.some((r) => r.msg === 'prediction' && r.endpoint === 'fraud')).toBe(false);
  });

  it('counts calls by namespace, endpoint, deployed model and code', async () => {
    expect(
      await metricValue(gatewayRequests, {
        namespace: env.namespace,
        endpoint: 'only-v2',
        deployed_model: '22',
        method: 'predict',
        code: '200',
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      await metricValue(gatewayRequests, {
        namespace: env.namespace,
        endpoint: 'closed',
        method: 'predict',
        code: '400',
      }),
    ).toBe(1);
  });
});
