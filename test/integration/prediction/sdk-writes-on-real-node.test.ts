/**
 * Vertex's write API end to end with the unmodified Python SDK (google-cloud-aiplatform), over gRPC and over REST,
 * written as a data scientist writes it, against models that really run on the real node:
 * `Model.upload(artifact_uri="gs://demo-models/iris/1", serving_container_image_uri=...)` (the bucket map sends the
 * artifact to the OCI artifact in the local registry, mounted as an image volume), `Endpoint.create`,
 * `model.deploy(..., traffic_percentage=100)` whose operation.result() waits on the real rollout,
 * `endpoint.predict` equal to scikit-learn's answers, a second version (`Model.upload(parent_model=...)`)
 * deployed beside it by `deploy(traffic_split={"0": 50, ...})` while the gateway restarts under the SDK's wait,
 * `undeploy`, `undeploy_all` and `delete`. After each step kubectl shows the objects and the caller's field
 * manager `vertex-api/<user>`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IRIS_INSTANCES } from '../../../dev/models/iris-model.js';
import { irisArtifactUri } from '../../../dev/models/iris-artifact.js';
import { until } from './real-node-serving.js';
import {
  DATA_SCIENTIST_ROLES,
  idOf,
  MACHINE_TYPE,
  managersOf,
  startNotebooks,
  WRITTEN_BY,
  type Caller,
  type KubeYaml,
  type Notebooks,
} from './sdk-notebook.js';

let s: Notebooks;
let scientist: Caller;
const timings: string[] = [];

beforeAll(async () => {
  s = await startNotebooks('notebooks', 'sdk writes');
  scientist = await s.caller('data-scientist', DATA_SCIENTIST_ROLES);
}, 1_800_000);

afterAll(async () => {
  console.error(`[sdk writes on the real node] ${timings.join('\n  ')}`);
  await s?.stop();
});

/** Written through the API by the scientist: their field manager and the annotation naming them. */
function expectWrittenByScientist(obj: KubeYaml | undefined): void {
  expect(obj, 'the object exists').toBeDefined();
  expect(managersOf(obj)).toContain(scientist.manager);
  expect(obj?.metadata.annotations?.[WRITTEN_BY]).toBe(scientist.user);
}

function condition(obj: KubeYaml | undefined, type: string): { status?: string; reason?: string } | undefined {
  return (obj?.status?.conditions as { type: string; status: string; reason?: string }[] | undefined)?.find(
    (c) => c.type === type,
  );
}

describe.each(['grpc', 'rest'] as const)('the Python SDK over %s', (transport) => {
  const cell = (step: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> =>
    s.cell(scientist, transport, step, args);
  let model = '';
  let endpoint = '';
  let first = '';
  let second = '';

  it('Model.upload with a gs:// artifact: a Model object the scientist wrote', async () => {
    const got = await cell('upload', {
      displayName: `iris-${transport}`,
      artifactUri: irisArtifactUri('1'),
      imageUri: s.images['vertex-sklearn'],
    });
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    expect(got.resourceName).toMatch(new RegExp(`^projects/${s.project}/locations/europe-west4/models/\\d{19}$`));
    expect(got).toMatchObject({ versionId: '1', artifactUri: irisArtifactUri('1'), displayName: `iris-${transport}` });
    expect(got.versionAliases).toContain('default');
    model = String(got.resourceName);
    const obj = await s.object(`model/${idOf(model)}`);
    expectWrittenByScientist(obj);
    expect(obj?.spec?.versions).toEqual([
      expect.objectContaining({
        id: '1',
        artifactUri: irisArtifactUri('1'),
        containerSpec: expect.objectContaining({ imageUri: s.images['vertex-sklearn'] }),
      }),
    ]);
  }, 300_000);

  it('Endpoint.create: a PredictionEndpoint object the scientist wrote', async () => {
    const got = await cell('create-endpoint', { displayName: `iris-${transport}` });
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    expect(got.resourceName).toMatch(new RegExp(`^projects/${s.project}/locations/europe-west4/endpoints/\\d{19}$`));
    endpoint = String(got.resourceName);
    expectWrittenByScientist(await s.object(`predictionendpoint/${idOf(endpoint)}`));
  }, 300_000);

  it('model.deploy(traffic_percentage=100): its wait ends once the model runs on the real node and takes the traffic', async () => {
    const started = Date.now();
    const got = await cell('deploy', { model, endpoint, machineType: MACHINE_TYPE });
    timings.push(`${transport}: model.deploy() returned after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    const deployed = got.deployedModels as { id: string; model: string; modelVersionId: string }[];
    expect(deployed).toHaveLength(1);
    first = deployed[0]?.id ?? '';
    expect(deployed[0]).toMatchObject({ model, modelVersionId: '1' });
    expect(got.trafficSplit).toEqual({ [first]: 100 });
    // The SDK's wait ended on the real rollout: no waiting here, the objects already say so.
    const dm = await s.object(`deployedmodel/${idOf(endpoint)}-${first}`);
    expectWrittenByScientist(dm);
    expect(condition(dm, 'Ready')?.status).toBe('True');
    expect(dm?.status?.modelVersionId).toBe('1');
    const ep = await s.object(`predictionendpoint/${idOf(endpoint)}`);
    expectWrittenByScientist(ep);
    expect(ep?.status?.trafficSplit).toEqual({ [first]: 100 });
  }, 900_000);

  it("endpoint.predict answers what scikit-learn computes, from the model's image volume", async () => {
    const got = await cell('predict', { endpoint, instances: IRIS_INSTANCES, calls: 5 });
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    for (const a of got.answers as { deployedModelId: string; predictions: unknown }[])
      expect(a).toEqual({ deployedModelId: first, predictions: s.expected });
  }, 300_000);

  it('Model.upload(parent_model=...) adds version 2 to the same Model object', async () => {
    const got = await cell('upload', {
      displayName: `iris-${transport}`,
      artifactUri: irisArtifactUri('2'),
      imageUri: s.images['vertex-sklearn'],
      parentModel: model,
    });
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    expect(got).toMatchObject({ resourceName: model, versionId: '2', artifactUri: irisArtifactUri('2') });
    const obj = await s.object(`model/${idOf(model)}`);
    expectWrittenByScientist(obj);
    expect((obj?.spec?.versions as { id: string }[]).map((v) => v.id)).toEqual(['1', '2']);
  }, 300_000);

  it('deploy(traffic_split={"0": 50, first: 50}) of version 2, with the gateway restarted while the SDK waits: 50/50', async () => {
    const deploying = cell('deploy', {
      model,
      version: '2',
      endpoint,
      machineType: MACHINE_TYPE,
      trafficSplit: { '0': 50, [first]: 50 },
    });
    // Restarted once the write is made (a second DeployedModel exists) and the rollout is under way.
    await until(
      'the second DeployedModel',
      async () => {
        const r = await s.k(['get', 'deployedmodels', '-o', 'name']);
        return r.stdout.split('\n').filter((l) => l.startsWith(`deployedmodel.`) && l.includes(idOf(endpoint)))
          .length === 2
          ? true
          : undefined;
      },
      120_000,
    );
    await s.restartGateway();
    const got = await deploying;
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    const deployed = got.deployedModels as { id: string; modelVersionId: string }[];
    expect(deployed.map((d) => d.modelVersionId).sort()).toEqual(['1', '2']);
    second = deployed.find((d) => d.id !== first)?.id ?? '';
    expect(got.trafficSplit).toEqual({ [first]: 50, [second]: 50 });
    const dm = await s.object(`deployedmodel/${idOf(endpoint)}-${second}`);
    expectWrittenByScientist(dm);
    expect(condition(dm, 'Ready')?.status).toBe('True');
    expect((await s.object(`predictionendpoint/${idOf(endpoint)}`))?.status?.trafficSplit).toEqual({
      [first]: 50,
      [second]: 50,
    });
    const answers = (await cell('predict', { endpoint, instances: IRIS_INSTANCES, calls: 20 })).answers as {
      deployedModelId: string;
      predictions: unknown;
    }[];
    expect(new Set(answers.map((a) => a.deployedModelId))).toEqual(new Set([first, second]));
    for (const a of answers) expect(a.predictions).toEqual(s.expected);
  }, 900_000);

  it('endpoint.undeploy(first, traffic_split={second: 100}): its DeployedModel is gone, the split moved', async () => {
    const got = await cell('undeploy', { endpoint, deployedModelId: first, trafficSplit: { [second]: 100 } });
    expect(got.error, JSON.stringify(got)).toBeUndefined();
    expect((got.deployedModels as { id: string }[]).map((d) => d.id)).toEqual([second]);
    expect(got.trafficSplit).toEqual({ [second]: 100 });
    expect(await s.object(`deployedmodel/${idOf(endpoint)}-${first}`)).toBeUndefined();
    expectWrittenByScientist(await s.object(`predictionendpoint/${idOf(endpoint)}`));
  }, 600_000);

  it('endpoint.undeploy_all(), endpoint.delete(), model.delete(): the objects are gone', async () => {
    const undeployed = await cell('undeploy-all', { endpoint });
    expect(undeployed.error, JSON.stringify(undeployed)).toBeUndefined();
    expect(undeployed.deployedModels).toEqual([]);
    expect(await s.object(`deployedmodel/${idOf(endpoint)}-${second}`)).toBeUndefined();
    const deletedEndpoint = await cell('delete-endpoint', { endpoint });
    expect(deletedEndpoint.error, JSON.stringify(deletedEndpoint)).toBeUndefined();
    expect(await s.object(`predictionendpoint/${idOf(endpoint)}`)).toBeUndefined();
    const deletedModel = await cell('delete-model', { model });
    expect(deletedModel.error, JSON.stringify(deletedModel)).toBeUndefined();
    expect(await s.object(`model/${idOf(model)}`)).toBeUndefined();
  }, 600_000);
});
