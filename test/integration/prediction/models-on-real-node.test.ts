/**
 * DeployedModels with `containerSpec` whose replicas run on the real node (kubelet + containerd), in model servers
 * nobody here wrote: Google's server for Vertex custom containers and MLServer, each serving the iris model through
 * `artifactUri`. Applied with kubectl as users do; the kubelet judges readiness on `healthRoute`; the gateway routes
 * `:predict` to the pod IPs through the EndpointSlices; the official Vertex Python client gets what scikit-learn
 * computes. Then the failure reasons a real kubelet gives (image pull, crash loop, a startup probe that never
 * passes), read from the models' conditions and by kstatus; and a blue/green switch to a model whose pods are still
 * starting, under a steady stream of calls, without one failed call.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRY_HOST } from '../../../src/devcluster/node-config.js';
import { MODEL_UID_LABEL } from '../../../src/reconcilers/serving/serving-plan.js';
import { kstatus } from '../../support/kstatus.js';
import {
  containerModel,
  endpoint,
  INSTANCES,
  manifests,
  mlserverServer,
  startRealNodeServing,
  vertexServer,
  type RealNodeServing,
} from './real-node-serving.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Obj {
  metadata: { uid?: string; generation?: number };
  spec?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
  status?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
}

let s: RealNodeServing;

beforeAll(async () => {
  s = await startRealNodeServing('models');
}, 1_800_000);

afterAll(async () => {
  await s?.stop();
});

async function get(resource: string): Promise<Obj> {
  const r = await s.k(['get', resource, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl get ${resource}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Obj;
}

function condition(obj: Obj, type: string): Condition | undefined {
  return (obj.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
}

async function apply(...objects: object[]): Promise<void> {
  const r = await s.k(['apply', '-f', '-'], manifests(...objects));
  expect(r.code, r.stderr).toBe(0);
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The endpoint's status.name, once the operator has written it. */
function statusName(name: string): Promise<string> {
  return until(`status.name of ${name}`, async () => (await get(`predictionendpoint/${name}`)).status?.name, 60_000);
}

interface Answer {
  readonly status: number;
  readonly json: { predictions?: unknown; deployedModelId?: string; error?: { message?: string } } | undefined;
}

async function predict(name: string): Promise<Answer> {
  const res = await request(`${s.gatewayUrl}/v1/${name}:predict`, {
    method: 'POST',
    dispatcher: s.agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instances: INSTANCES }),
    headersTimeout: 15_000,
  });
  const text = await res.body.text();
  let json: Answer['json'];
  try {
    json = JSON.parse(text) as Answer['json'];
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, json };
}

/** What each protocol's answer holds for the instances: Vertex's server one class each, MLServer's [n, 1] output one row each. */
function expectedFrom(id: string, vertexIds: readonly string[]): unknown {
  return vertexIds.includes(id) ? s.expected : s.expected.map((c) => [c]);
}

async function podsOf(model: string): Promise<Obj[]> {
  const uid = (await get(`deployedmodel/${model}`)).metadata.uid ?? '';
  const r = await s.k(['get', 'pods', '-l', `${MODEL_UID_LABEL}=${uid}`, '-o', 'json']);
  return (JSON.parse(r.stdout) as { items: Obj[] }).items;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

describe('containerSpec models on the real node', () => {
  it('scikit-learn classifies the instances into all three classes (the comparisons below can fail)', () => {
    expect(new Set(s.expected)).toEqual(new Set([0, 1, 2]));
  });

  it("serves the iris model in Google's Vertex server and in MLServer, ready by the kubelet's probe of healthRoute, routed to the pod IPs", async () => {
    // Google's server alone first: from kubectl apply to its first answered call.
    let applied = Date.now();
    await apply(endpoint('iris', { '1': 100 }), containerModel('iris-vertex', 'iris', '1', vertexServer(s.images)));
    const name = await statusName('iris');
    const vertexFirst = await until(
      'a first answer of the Vertex server',
      async () => {
        const r = await predict(name);
        return r.status === 200 ? r : undefined;
      },
      600_000,
    );
    const vertexMs = Date.now() - applied;
    expect(vertexFirst.json?.deployedModelId).toBe('1');
    expect(vertexFirst.json?.predictions).toEqual(s.expected);

    // MLServer beside it, half the traffic: until it answers, the split in effect keeps calls on Google's server.
    applied = Date.now();
    await apply(
      endpoint('iris', { '1': 50, '2': 50 }),
      containerModel('iris-mlserver', 'iris', '2', mlserverServer(s.images)),
    );
    const mlserverFirst = await until(
      'a first answer of MLServer',
      async () => {
        const r = await predict(name);
        expect(r.status).toBe(200);
        return r.json?.deployedModelId === '2' ? r : undefined;
      },
      600_000,
    );
    const mlserverMs = Date.now() - applied;
    expect(mlserverFirst.json?.predictions).toEqual(expectedFrom('2', ['1']));
    console.error(
      `[models on the real node] kubectl apply → first answered :predict (images in the registry, not yet on the node): ` +
        `Vertex server ${seconds(vertexMs)} s, MLServer ${seconds(mlserverMs)} s`,
    );

    const ready = await s.k([
      'wait',
      '--for=condition=Ready',
      'deployedmodel/iris-vertex',
      'deployedmodel/iris-mlserver',
      '--timeout=60s',
    ]);
    expect(ready.code, ready.stderr).toBe(0);
    for (const [model, health] of [
      ['iris-vertex', '/v1/endpoints/iris/deployedModels/1'],
      ['iris-mlserver', '/v2/health/ready'],
    ] as const) {
      const pods = await podsOf(model);
      expect(pods).toHaveLength(1);
      const pod = pods[0] as Obj;
      expect(pod.spec?.nodeName).toBe(s.plane.realNode?.name);
      expect(pod.status?.podIP).toMatch(/^198\.19\.128\.\d+$/);
      expect(pod.spec?.containers[0].readinessProbe.httpGet.path).toBe(health);
      expect(pod.status?.containerStatuses[0].ready).toBe(true);
      // The EndpointSlice controller lists the pod's IP as a ready endpoint of the model's Service.
      const slices = await s.k([
        'get',
        'endpointslices',
        '-l',
        `kubernetes.io/service-name=dm-${model}`,
        '-o',
        'jsonpath={.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}',
      ]);
      expect(slices.stdout.split(' ')).toContain(pod.status?.podIP);
    }

    // The official Vertex client, over gRPC and REST: every answer is what scikit-learn computes.
    for (const [transport, calls] of [
      ['grpc', 20],
      ['rest', 10],
    ] as const) {
      const answer = await s.sdk('predictions', name, transport, JSON.stringify(INSTANCES), String(calls));
      expect(answer.error, JSON.stringify(answer)).toBeUndefined();
      const answers = answer.answers as { deployedModelId: string; predictions: unknown }[];
      expect(answers).toHaveLength(calls);
      expect(new Set(answers.map((a) => a.deployedModelId))).toEqual(new Set(['1', '2']));
      for (const a of answers) expect(a.predictions).toEqual(expectedFrom(a.deployedModelId, ['1']));
    }
  }, 1_200_000);

  it('says why replicas fail, as the kubelet reports it: ImagePullBackOff, CrashLoopBackOff, DeploymentTimeout; kstatus reads each as Failed', async () => {
    await apply(
      endpoint('failing', {}),
      containerModel('missing-image', 'failing', '31', { imageUri: `${REGISTRY_HOST}/endpoint-operator/not-pushed:1` }),
      // MLServer's entrypoint exits when AIP_STORAGE_URI is no directory in the image.
      containerModel('exits', 'failing', '32', mlserverServer(s.images), 'gs://models-bucket/iris'),
      // Google's server runs and answers 404 on this path: the startup probe never passes.
      containerModel('never-starts', 'failing', '33', {
        ...vertexServer(s.images),
        startupProbe: { httpGet: { path: '/never-ready' }, periodSeconds: 2, failureThreshold: 1000 },
        deploymentTimeout: '20s',
      }),
    );
    const cases = [
      ['missing-image', 'ImagePullBackOff', /the image cannot be pulled/],
      [
        'exits',
        'CrashLoopBackOff',
        /the model server keeps exiting \(CrashLoopBackOff, \d+ restarts; last exit code 2/,
      ],
      ['never-starts', 'DeploymentTimeout', /containerSpec.deploymentTimeout passed with 0 of 1 required replica/],
    ] as const;
    for (const [model, reason, message] of cases) {
      const seen = await until(
        `${model}: ${reason}`,
        async () => {
          const dm = await get(`deployedmodel/${model}`);
          return condition(dm, 'Ready')?.reason === reason ? dm : undefined;
        },
        180_000,
      );
      expect(condition(seen, 'Ready')).toMatchObject({ status: 'False', message: expect.stringMatching(message) });
      expect(condition(seen, 'Stalled')).toMatchObject({ status: 'True', reason });
      expect(condition(seen, 'Reconciling')?.status ?? 'False').toBe('False');
      expect(await kstatus(seen as Parameters<typeof kstatus>[0])).toMatchObject({ status: 'Failed' });
      // On the real node, so what the pod shows is the kubelet's, not a kwok stage's.
      const pods = await podsOf(model);
      for (const pod of pods) expect(pod.spec?.nodeName).toBe(s.plane.realNode?.name);
      console.error(
        `[models on the real node] ${model}: ${reason}; the kubelet reported ` +
          JSON.stringify(
            pods.map((p) =>
              (p.status?.containerStatuses ?? []).map((c: Obj['status']) => ({
                state: c?.state,
                lastState: c?.lastState,
                restartCount: c?.restartCount,
              })),
            ),
          ),
      );
    }
    const done = await s.k(['delete', 'deployedmodel', 'missing-image', 'exits', 'never-starts', '--wait=false']);
    expect(done.code, done.stderr).toBe(0);
  }, 600_000);

  it('switches a split from a running model to one whose pods are still starting, under a steady stream of calls, without one failed call', async () => {
    await apply(endpoint('bg', { '41': 100 }), containerModel('blue', 'bg', '41', vertexServer(s.images)));
    const name = await statusName('bg');
    const blueReady = await s.k(['wait', '--for=condition=Ready', 'deployedmodel/blue', '--timeout=600s']);
    expect(blueReady.code, blueReady.stderr).toBe(0);
    await until('blue answers', async () => ((await predict(name)).status === 200 ? true : undefined), 60_000);

    // 10 calls a second, each on its own; at most 20 outstanding, so a stall shows as failures, not as a queue.
    const answeredBy: string[] = [];
    const failures: string[] = [];
    let sent = 0;
    let inFlight = 0;
    const calls: Promise<void>[] = [];
    const timer = setInterval(() => {
      if (inFlight >= 20) {
        failures.push('more than 20 calls outstanding');
        return;
      }
      sent++;
      inFlight++;
      calls.push(
        predict(name)
          .then((r) => {
            const id = r.json?.deployedModelId ?? '';
            if (r.status !== 200) failures.push(`${r.status} ${r.json?.error?.message ?? ''}`);
            else if (JSON.stringify(r.json?.predictions) !== JSON.stringify(expectedFrom(id, ['41'])))
              failures.push(`model ${id} answered ${JSON.stringify(r.json?.predictions)}`);
            else answeredBy.push(id);
          })
          .catch((err: unknown) => void failures.push(String(err)))
          .finally(() => void inFlight--),
      );
    }, 100);
    try {
      await until('calls flowing', async () => (answeredBy.length >= 30 ? true : undefined), 30_000);
      await apply(
        endpoint('bg', { '41': 0, '42': 100 }),
        containerModel('green', 'bg', '42', mlserverServer(s.images)),
      );
      const pending = await until(
        'the switch pending',
        async () => {
          const ep = await get('predictionendpoint/bg');
          const ready = condition(ep, 'Ready');
          return ready?.reason === 'TrafficSplitPending' && ep.status?.observedGeneration === ep.metadata.generation
            ? ep
            : undefined;
        },
        30_000,
      );
      expect(pending.status?.trafficSplit).toEqual({ '41': 100 });
      const green = await get('deployedmodel/green');
      expect(condition(green, 'Ready')?.status).not.toBe('True');
      const switchedAt = Date.now();
      await until(
        'green answers',
        async () =>
          answeredBy.slice(-20).length === 20 && answeredBy.slice(-20).every((id) => id === '42') ? true : undefined,
        600_000,
      );
      console.error(
        `[models on the real node] blue/green: green served ${seconds(Date.now() - switchedAt)} s after the switch was seen pending`,
      );
      expect((await get('predictionendpoint/bg')).status?.trafficSplit).toEqual({ '41': 0, '42': 100 });
    } finally {
      clearInterval(timer);
      await Promise.all(calls);
    }
    console.error(
      `[models on the real node] blue/green: ${sent} calls sent, ${failures.length} failed; answered by blue ${answeredBy.filter((id) => id === '41').length}, by green ${answeredBy.filter((id) => id === '42').length}`,
    );
    expect(failures).toEqual([]);
    expect(answeredBy.filter((id) => id === '41').length).toBeGreaterThan(30);
  }, 1_200_000);
});
