/**
 * Vertex's write API failing as it should, driven by the unmodified Python SDK against models on the real node:
 * a deploy whose image cannot be pulled ends its operation with the kubelet's pull reason and leaves the effective
 * split where it was; a caller without the model-deployer role gets code 7 and nothing is written; an endpoint whose
 * split a GitOps controller owns answers a conflict naming that controller, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRY_HOST } from '../../../dev/cluster/real-node/node-config.js';
import { IRIS_INSTANCES } from '../../../dev/models/iris-model.js';
import { irisArtifactUri } from '../../../dev/models/iris-artifact.js';
import { PREDICTION_CALLER_ROLE } from '../../../src/gateway/auth/attributes.js';
import { manifests } from './real-node-serving.js';
import {
  DATA_SCIENTIST_ROLES,
  idOf,
  MACHINE_TYPE,
  managersOf,
  startNotebooks,
  type Caller,
  type Notebooks,
} from './sdk-notebook.js';

let s: Notebooks;
let scientist: Caller;

beforeAll(async () => {
  s = await startNotebooks('failing-notebooks', 'sdk write failures');
  scientist = await s.caller('data-scientist', DATA_SCIENTIST_ROLES);
}, 1_800_000);

afterAll(async () => {
  await s?.stop();
});

/**
 * The SDK's exception names the code as its transport carries it: gRPC's status, or REST's HTTP status (Google's
 * mapping: 7 PERMISSION_DENIED is 403, 10 ABORTED is 409).
 */
const DENIED = { grpc: 'PERMISSION_DENIED', rest: 'FORBIDDEN' } as const;
const ABORTED = { grpc: 'ABORTED', rest: 'CONFLICT' } as const;

const names = async (kind: string): Promise<string[]> =>
  (await s.k(['get', kind, '-o', 'name'])).stdout.split('\n').filter(Boolean).sort();

/** A Model uploaded by the scientist over gRPC; its resource name. */
async function upload(displayName: string, imageUri: string): Promise<string> {
  const got = await s.cell(scientist, 'grpc', 'upload', { displayName, artifactUri: irisArtifactUri('1'), imageUri });
  expect(got.error, JSON.stringify(got)).toBeUndefined();
  return String(got.resourceName);
}

describe('writes that fail', () => {
  it('a deploy whose image cannot be pulled: the operation ends with the pull reason, the effective split has not moved', async () => {
    const good = await upload('iris', s.images['vertex-sklearn']);
    const created = await s.cell(scientist, 'grpc', 'create-endpoint', { displayName: 'pull-failure' });
    const endpoint = String(created.resourceName);
    const deployed = await s.cell(scientist, 'grpc', 'deploy', { model: good, endpoint, machineType: MACHINE_TYPE });
    expect(deployed.error, JSON.stringify(deployed)).toBeUndefined();
    const running = (deployed.deployedModels as { id: string }[])[0]?.id ?? '';

    const missing = `${REGISTRY_HOST}/endpoint-operator/not-pushed:1`;
    const broken = await upload('iris-broken', missing);
    for (const transport of ['grpc', 'rest'] as const) {
      const got = await s.cell(scientist, transport, 'deploy', { model: broken, endpoint, machineType: MACHINE_TYPE });
      expect(got, JSON.stringify(got)).toMatchObject({ code: 'FAILED_PRECONDITION' });
      expect(String(got.message)).toMatch(/ImagePullBackOff|ErrImagePull/);
      expect(String(got.message)).toContain(missing);
      const ep = await s.object(`predictionendpoint/${idOf(endpoint)}`);
      expect(ep?.status?.trafficSplit).toEqual({ [running]: 100 });
      const answers = (await s.cell(scientist, transport, 'predict', { endpoint, instances: IRIS_INSTANCES, calls: 3 }))
        .answers as { deployedModelId: string; predictions: unknown }[];
      for (const a of answers) expect(a).toEqual({ deployedModelId: running, predictions: s.expected });
    }
  }, 1_200_000);

  it('a caller without the model-deployer role: code 7 over either transport, nothing written', async () => {
    const intruder = await s.caller('caller-only', [PREDICTION_CALLER_ROLE]);
    const before = { models: await names('models'), endpoints: await names('predictionendpoints') };
    for (const transport of ['grpc', 'rest'] as const) {
      const uploaded = await s.cell(intruder, transport, 'upload', {
        displayName: 'not-allowed',
        artifactUri: irisArtifactUri('1'),
        imageUri: s.images['vertex-sklearn'],
      });
      expect(uploaded, JSON.stringify(uploaded)).toMatchObject({ code: DENIED[transport] });
      expect(String(uploaded.message)).toMatch(/endpoint-operator-model-deployer/);
      const created = await s.cell(intruder, transport, 'create-endpoint', { displayName: 'not-allowed' });
      expect(created, JSON.stringify(created)).toMatchObject({ code: DENIED[transport] });
    }
    expect({ models: await names('models'), endpoints: await names('predictionendpoints') }).toEqual(before);
  }, 600_000);

  it('an endpoint whose split Argo CD owns: the deploy is a conflict naming the manager, nothing written', async () => {
    // Git's endpoint, applied as Argo CD applies (server-side, its field manager), with a model it also deploys.
    const applied = await s.k(
      ['apply', '--server-side', '--field-manager=argocd-controller', '-f', '-'],
      manifests(
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'PredictionEndpoint',
          metadata: { name: 'gitops' },
          spec: { displayName: 'gitops', trafficSplit: { '7': 100 } },
        },
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'DeployedModel',
          metadata: { name: 'gitops-7' },
          spec: {
            endpointRef: { name: 'gitops' },
            id: '7',
            model: `projects/${s.project}/locations/europe-west4/models/iris-git`,
            displayName: 'iris-git',
            automaticResources: { minReplicaCount: 1 },
            artifactUri: irisArtifactUri('1'),
            containerSpec: { imageUri: s.images['vertex-sklearn'] },
          },
        },
      ),
    );
    expect(applied.code, applied.stderr).toBe(0);
    // Serving: the SDK's deploy(traffic_percentage=100) then sends {"0": 100, "7": 0}, a change of Argo CD's entry.
    const ready = await s.k(['wait', '--for=condition=Ready', 'deployedmodel/gitops-7', '--timeout=600s']);
    expect(ready.code, ready.stderr).toBe(0);
    const model = await upload('iris-notebook', s.images['vertex-sklearn']);
    const endpoint = `projects/${s.project}/locations/europe-west4/endpoints/gitops`;
    const modelsBefore = await names('deployedmodels');
    for (const transport of ['grpc', 'rest'] as const) {
      const got = await s.cell(scientist, transport, 'deploy', { model, endpoint, machineType: MACHINE_TYPE });
      expect(got, JSON.stringify(got)).toMatchObject({ code: ABORTED[transport] });
      expect(String(got.message)).toContain('argocd-controller');
      expect(String(got.message)).toContain('trafficSplit');
      const ep = await s.object('predictionendpoint/gitops');
      expect(ep?.spec?.trafficSplit).toEqual({ '7': 100 });
      expect(managersOf(ep).filter((m) => m.startsWith('vertex-api/'))).toEqual([]);
      expect(await names('deployedmodels')).toEqual(modelsBefore);
    }
  }, 600_000);
});
