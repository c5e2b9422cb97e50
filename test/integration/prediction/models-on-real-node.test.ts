/**
 * DeployedModels with `containerSpec` whose replicas run on the real node (kubelet + containerd), in model servers
 * nobody here wrote: Google's server for Vertex custom containers and MLServer, each serving the iris model through
 * `artifactUri`. Applied with kubectl as users do; the kubelet judges readiness on `healthRoute`; the gateway routes
 * `:predict` to the pod IPs through the EndpointSlices; the official Vertex Python client gets what scikit-learn
 * computes. Then the failure reasons a real kubelet gives (image pull, crash loop, a startup probe that never
 * passes), read from the models' conditions and by kstatus; a Model whose versions name `gs://` artifacts that the
 * bucket map sends to OCI artifacts in the local registry, mounted as image volumes; and a blue/green switch to a model whose pods are still
 * starting, under a steady stream of calls, without one failed call.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { irisArtifactBucket, irisArtifactUri, pushIrisArtifact } from '../../../dev/models/iris-artifact.js';
import { ensureIrisModel, IRIS_INSTANCES } from '../../../dev/models/iris-model.js';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import { REGISTRY_HOST } from '../../../dev/cluster/real-node/node-config.js';
import { ARTIFACT_VOLUME, MOUNT_PATH } from '../../../src/reconcilers/serving/artifact-volume.js';
import { MODEL_UID_LABEL } from '../../../src/reconcilers/serving/serving-plan.js';
import { kstatus } from '../../support/kstatus.js';
import {
  containerModel,
  endpoint,
  manifests,
  mlserverServer,
  startRealNodeServing,
  vertexServer,
  type RealNodeServing,
  until,
} from './real-node-serving.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Obj {
  metadata: { name?: string; uid?: string; generation?: number };
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
    body: JSON.stringify({ instances: IRIS_INSTANCES }),
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
const timings: string[] = [];

/** kubectl apply of `objects`, then `:predict` on `name` until `answered` holds; the time between, in ms. */
async function applyUntilAnswered(
  objects: object[],
  endpointName: string,
  answered: (a: Answer) => boolean,
): Promise<{ ms: number; answer: Answer; name: string }> {
  const applied = Date.now();
  await apply(...objects);
  const name = await statusName(endpointName);
  const answer = await until(
    `an answer on ${endpointName}`,
    async () => {
      const r = await predict(name);
      return answered(r) ? r : undefined;
    },
    600_000,
  );
  return { ms: Date.now() - applied, answer, name };
}

/** The model's one pod runs on the real node with the kubelet probing `health`, and its IP is a ready endpoint of the model's Service. */
async function expectServedFromRealNode(model: string, health: string): Promise<void> {
  const pods = await podsOf(model);
  expect(pods).toHaveLength(1);
  const pod = pods[0] as Obj;
  expect(pod.spec?.nodeName).toBe(s.plane.realNode?.name);
  expect(pod.status?.podIP).toMatch(/^198\.19\.128\.\d+$/);
  expect(pod.spec?.containers[0].readinessProbe.httpGet.path).toBe(health);
  expect(pod.status?.containerStatuses[0].ready).toBe(true);
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

describe('containerSpec models on the real node', () => {
  afterAll(() => {
    console.error(`[models on the real node] kubectl apply → first answered :predict:\n  ${timings.join('\n  ')}`);
  });

  it('scikit-learn classifies the instances into all three classes (the comparisons below can fail)', () => {
    expect(new Set(s.expected)).toEqual(new Set([0, 1, 2]));
  });

  it("answers in Google's Vertex server, its readiness judged by the kubelet on healthRoute, routed to the pod's IP", async () => {
    const { ms, answer } = await applyUntilAnswered(
      [endpoint('iris', { '1': 100 }), containerModel('iris-vertex', 'iris', '1', vertexServer(s.images))],
      'iris',
      (r) => r.status === 200,
    );
    timings.push(`Vertex server, image in the registry, not yet on the node: ${seconds(ms)} s`);
    expect(answer.json?.deployedModelId).toBe('1');
    expect(answer.json?.predictions).toEqual(s.expected);
    const ready = await s.k(['wait', '--for=condition=Ready', 'deployedmodel/iris-vertex', '--timeout=60s']);
    expect(ready.code, ready.stderr).toBe(0);
    // Google's server reads the routes from AIP_HEALTH_ROUTE and AIP_PREDICT_ROUTE: Vertex's defaults here.
    await expectServedFromRealNode('iris-vertex', '/v1/endpoints/iris/deployedModels/1');
  }, 900_000);

  it('switches a split from a running model to one whose image is still pulling and pods starting, under 10 calls a second, without one failed call', async () => {
    const blue = await applyUntilAnswered(
      [endpoint('bg', { '41': 100 }), containerModel('blue', 'bg', '41', vertexServer(s.images))],
      'bg',
      (r) => r.status === 200,
    );
    timings.push(`Vertex server, image already on the node: ${seconds(blue.ms)} s`);
    const name = blue.name;

    // 10 calls a second, each on its own; at most 20 outstanding, so a stall shows as failures, not as a queue.
    const answeredBy: string[] = [];
    const failures: string[] = [];
    let sent = 0;
    let inFlight = 0;
    let greenFirstAt: number | undefined;
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
            else {
              answeredBy.push(id);
              if (id === '42') greenFirstAt ??= Date.now();
            }
          })
          .catch((err: unknown) => void failures.push(String(err)))
          .finally(() => void inFlight--),
      );
    }, 100);
    const greenStages: string[] = [];
    try {
      await until('calls flowing', async () => (answeredBy.length >= 30 ? true : undefined), 30_000);
      const applied = Date.now();
      // MLServer's image is in the registry but not yet on the node: the switch waits for a real pull and start.
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
      await until(
        'green answers',
        async () => {
          const stage = (await get('deployedmodel/green')).status?.deploymentStage as string | undefined;
          if (stage !== undefined && greenStages.at(-1) !== stage) greenStages.push(stage);
          const last = answeredBy.slice(-20);
          return last.length === 20 && last.every((id) => id === '42') ? true : undefined;
        },
        600_000,
      );
      timings.push(
        `MLServer as green, image in the registry, not yet on the node: ${seconds((greenFirstAt ?? NaN) - applied)} s`,
      );
      // Blue answered first: green took over, it did not start alone.
      expect(answeredBy.indexOf('42')).toBeGreaterThan(0);
      expect((await get('predictionendpoint/bg')).status?.trafficSplit).toEqual({ '41': 0, '42': 100 });
    } finally {
      clearInterval(timer);
      await Promise.all(calls);
    }
    console.error(
      `[models on the real node] blue/green: ${sent} calls sent, ${failures.length} failed; answered by blue ${answeredBy.filter((id) => id === '41').length}, by green ${answeredBy.filter((id) => id === '42').length}; green's stages while pending: ${greenStages.join(' → ')}`,
    );
    expect(failures).toEqual([]);
    // Green was seen pulling its image while blue served.
    expect(greenStages).toContain('GETTING_CONTAINER_IMAGE');
    const cleared = await s.k(['delete', 'deployedmodel', 'blue', 'green', '--wait=false']);
    expect(cleared.code, cleared.stderr).toBe(0);
  }, 1_200_000);

  it("serves MLServer beside Google's server on one endpoint; the official Vertex client gets what scikit-learn computes from both", async () => {
    const refused: string[] = [];
    const { ms, answer, name } = await applyUntilAnswered(
      [endpoint('iris', { '1': 50, '2': 50 }), containerModel('iris-mlserver', 'iris', '2', mlserverServer(s.images))],
      'iris',
      (r) => {
        if (r.status !== 200) refused.push(`${r.status} ${r.json?.error?.message ?? ''}`);
        return r.json?.deployedModelId === '2';
      },
    );
    // Until MLServer was deployed the split in effect kept every call on Google's server.
    expect(refused).toEqual([]);
    timings.push(`MLServer, image already on the node: ${seconds(ms)} s`);
    expect(answer.json?.predictions).toEqual(expectedFrom('2', ['1']));
    const ready = await s.k([
      'wait',
      '--for=condition=Ready',
      'deployedmodel/iris-vertex',
      'deployedmodel/iris-mlserver',
      '--timeout=60s',
    ]);
    expect(ready.code, ready.stderr).toBe(0);
    await expectServedFromRealNode('iris-mlserver', '/v2/health/ready');

    // The official Vertex client, over gRPC and REST: every answer is what scikit-learn computes.
    for (const [transport, calls] of [
      ['grpc', 20],
      ['rest', 10],
    ] as const) {
      const got = await s.sdk('predictions', name, transport, JSON.stringify(IRIS_INSTANCES), String(calls));
      expect(got.error, JSON.stringify(got)).toBeUndefined();
      const answers = got.answers as { deployedModelId: string; predictions: unknown }[];
      expect(answers).toHaveLength(calls);
      expect(new Set(answers.map((a) => a.deployedModelId))).toEqual(new Set(['1', '2']));
      for (const a of answers) expect(a.predictions).toEqual(expectedFrom(a.deployedModelId, ['1']));
    }
  }, 900_000);

  it("serves a Model's two versions from gs:// artifacts that the bucket map sends to OCI artifacts in the local registry, mounted as image volumes; 50/50", async () => {
    // The iris model as an OCI artifact (its files alone), pushed as versions 1 and 2 of gs://demo-models/iris.
    const logFile = join(s.plane.dataDir, 'logs', 'iris-artifacts.log');
    const modelDir = await ensureIrisModel(await ensurePythonPackages('mlserver'));
    const references = [await pushIrisArtifact(modelDir, '1', logFile), await pushIrisArtifact(modelDir, '2', logFile)];
    const project = s.namespace; // the operator's project template is {namespace}
    const modelName = `projects/${project}/locations/europe-west4/models/iris-oci`;
    const version = (id: string, containerSpec: Record<string, unknown>): object => ({
      id,
      artifactUri: irisArtifactUri(id),
      containerSpec,
    });
    const byReference = (name: string, id: string, versionId: string): object => ({
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name },
      spec: {
        endpointRef: { name: 'registry' },
        id,
        model: `${modelName}@${versionId}`,
        displayName: name,
        automaticResources: { minReplicaCount: 1 },
      },
    });
    const seenIds = new Set<string>();
    const wrong: string[] = [];
    const { ms, name } = await applyUntilAnswered(
      [
        irisArtifactBucket(),
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'Model',
          metadata: { name: 'iris-oci' },
          spec: {
            displayName: 'iris from the registry',
            // Version 1 in Google's server, version 2 in MLServer: both read the files at AIP_STORAGE_URI.
            versions: [version('1', vertexServer(s.images)), version('2', mlserverServer(s.images))],
            versionAliases: [{ alias: 'default', versionId: '1' }],
          },
        },
        endpoint('registry', { '11': 50, '12': 50 }),
        byReference('iris-oci-1', '11', 'default'),
        byReference('iris-oci-2', '12', '2'),
      ],
      'registry',
      (r) => {
        const id = r.json?.deployedModelId;
        if (r.status === 200 && id !== undefined) {
          seenIds.add(id);
          const predictions = JSON.stringify(r.json?.predictions);
          if (predictions !== JSON.stringify(expectedFrom(id, ['11']))) wrong.push(`${id} answered ${predictions}`);
        }
        return seenIds.size === 2;
      },
    );
    expect(wrong).toEqual([]);
    timings.push(`a Model's two versions from OCI artifacts (image volumes), both answering: ${seconds(ms)} s`);
    const ready = await s.k([
      'wait',
      '--for=condition=Ready',
      'deployedmodel/iris-oci-1',
      'deployedmodel/iris-oci-2',
      'model/iris-oci',
      '--timeout=60s',
    ]);
    expect(ready.code, ready.stderr).toBe(0);
    for (const [model, versionId, reference] of [
      ['iris-oci-1', '1', references[0]],
      ['iris-oci-2', '2', references[1]],
    ] as const) {
      const dm = await get(`deployedmodel/${model}`);
      expect(dm.status?.modelVersionId).toBe(versionId);
      const [pod] = await podsOf(model);
      expect(pod?.spec?.nodeName).toBe(s.plane.realNode?.name);
      // The artifact is an image volume the kubelet pulled, mounted where AIP_STORAGE_URI points the server.
      expect(pod?.spec?.volumes).toContainEqual({
        name: ARTIFACT_VOLUME,
        image: { reference, pullPolicy: 'IfNotPresent' },
      });
      const container = pod?.spec?.containers[0];
      expect(container.volumeMounts).toContainEqual(
        expect.objectContaining({ name: ARTIFACT_VOLUME, mountPath: MOUNT_PATH, readOnly: true }),
      );
      expect(container.env).toContainEqual({ name: 'AIP_STORAGE_URI', value: MOUNT_PATH });
      // The image has python3 but no coreutils (docs/container-image.md): the server's own interpreter lists it.
      const list = 'import os, sys; print("\\n".join(os.listdir(sys.argv[1])))';
      const files = await s.k(['exec', `pod/${pod?.metadata.name}`, '--', 'python3', '-c', list, MOUNT_PATH]);
      expect(files.code, files.stderr).toBe(0);
      expect(files.stdout.split('\n').filter(Boolean).sort()).toEqual(['model-settings.json', 'model.joblib']);
    }
    // 50/50 in effect: both versions answer the official Vertex client with what scikit-learn computes.
    expect((await get('predictionendpoint/registry')).status?.trafficSplit).toEqual({ '11': 50, '12': 50 });
    const got = await s.sdk('predictions', name, 'grpc', JSON.stringify(IRIS_INSTANCES), '20');
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    const answers = got.answers as { deployedModelId: string; predictions: unknown }[];
    expect(new Set(answers.map((a) => a.deployedModelId))).toEqual(new Set(['11', '12']));
    for (const a of answers) expect(a.predictions).toEqual(expectedFrom(a.deployedModelId, ['11']));
    const cleared = await s.k(['delete', 'deployedmodel', 'iris-oci-1', 'iris-oci-2', '--wait=false']);
    expect(cleared.code, cleared.stderr).toBe(0);
  }, 900_000);

  it('says why replicas fail, as the kubelet reports it: ImagePullBackOff, CrashLoopBackOff, DeploymentTimeout; kstatus reads each as Failed', async () => {
    await apply(
      endpoint('failing', {}),
      containerModel('missing-image', 'failing', '31', { imageUri: `${REGISTRY_HOST}/endpoint-operator/not-pushed:1` }),
      // MLServer's entrypoint exits (code 2) when AIP_STORAGE_URI is no directory in the image: a URI of a scheme the
      // operator passes through unchanged (a gs:// one would wait for the bucket map; a missing absolute path would
      // start MLServer with no model rather than exit).
      containerModel('exits', 'failing', '32', mlserverServer(s.images), 's3://models-bucket/iris'),
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
});
