/**
 * DeployedModel backends and endpoint names on a real apiserver, driven with kubectl: readiness
 * follows the Service and its EndpointSlices through watches; status.name is unique across
 * namespaces, status.url is published, and an old-scheme status.name is rewritten.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendEndpointSlice, backendService, type HostedBackend } from '../../../dev/environment/backend-services.js';
import { createTestNamespace, kubectl, testCluster } from '../../support/cluster.js';
import {
  apply,
  eventually,
  getJson,
  installCrds,
  readyOf,
  runOperator,
  testClient,
  waitReady,
  type TestOperator,
} from './harness.js';

const GATEWAY = 'http://gateway.test.svc:8090';

function endpointYaml(name: string): string {
  return `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: ${name} }
spec: { displayName: Scoring, trafficSplit: { "1001": 100 } }
`;
}

function modelYaml(name: string, endpoint: string, id: string, port: string | number): string {
  return `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ${name} }
spec:
  endpointRef: { name: ${endpoint} }
  id: "${id}"
  model: projects/p/locations/l/models/${name}
  automaticResources: { minReplicaCount: 1 }
  backend:
    service: { name: scorer, port: ${typeof port === 'number' ? port : JSON.stringify(port)} }
    protocol: KServeV1
    modelName: ${name}
`;
}

async function modelReady(
  ns: string,
  name: string,
): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  return readyOf(await getJson(ns, `deployedmodel/${name}`));
}

describe('DeployedModel backends', () => {
  let ns: string;
  let op: TestOperator;
  const scorer = (overrides: Partial<HostedBackend> = {}): HostedBackend => ({
    name: 'scorer',
    namespace: ns,
    servicePort: 80,
    portName: 'http',
    address: testCluster().modelHost.address,
    targetPort: 9001,
    ...overrides,
  });

  beforeAll(async () => {
    const client = testClient();
    await installCrds(client);
    client.close();
    ns = await createTestNamespace('backends');
    op = await runOperator(ns, { project: '{namespace}', gatewayUrl: GATEWAY });
  });

  afterAll(async () => {
    await op?.stop();
  });

  it('is BackendUnavailable while the Service is missing, lacks the port, or has no ready endpoint, and Ready once it has one', async () => {
    await apply(ns, endpointYaml('scoring') + '---' + modelYaml('gbt', 'scoring', '1001', 'http'));
    const missing = await eventually('Service missing', async () => {
      const r = await modelReady(ns, 'gbt');
      return r?.reason === 'BackendUnavailable' ? r : undefined;
    });
    expect(missing.status).toBe('False');
    expect(missing.message).toContain(`spec.backend.service.name: Service "scorer" not found in namespace "${ns}"`);

    await apply(ns, yaml.dump(backendService(scorer({ portName: 'grpc', servicePort: 9000 }))));
    await eventually('port unknown', async () =>
      (await modelReady(ns, 'gbt'))?.message?.includes(
        'spec.backend.service.port: Service "scorer" has no port "http" (its ports: 9000 (grpc))',
      ),
    );

    await apply(
      ns,
      yaml.dump(backendService(scorer())) + '---\n' + yaml.dump(backendEndpointSlice(scorer({ ready: false }))),
    );
    await eventually('no ready endpoint', async () =>
      (await modelReady(ns, 'gbt'))?.message?.includes(
        'Service "scorer" port 80 (http) has no ready endpoint (1 endpoint(s) listed, none ready on that port)',
      ),
    );

    await apply(ns, yaml.dump(backendEndpointSlice(scorer({ ready: true }))));
    await waitReady(ns, 'deployedmodel/gbt', 30);
    expect((await modelReady(ns, 'gbt'))?.message).toContain('served by Service "scorer" port 80 (http)');
    const ep = await eventually('the endpoint shows the model Ready', async () => {
      const obj = await getJson(ns, 'predictionendpoint/scoring');
      const models = obj.status?.deployedModels as { id: string; ready?: string }[] | undefined;
      return models?.[0]?.ready === 'True' ? obj : undefined;
    });
    expect(ep.status?.deployedModels).toEqual([
      expect.objectContaining({ id: '1001', deployedModelRef: 'gbt', ready: 'True', reason: 'Reconciled' }),
    ]);

    // The server goes away: its slice is deleted, and the model says so again (and the endpoint with it).
    const deleted = await kubectl(['delete', '-n', ns, 'endpointslices.v1.discovery.k8s.io/scorer-hosted']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await eventually('BackendUnavailable after the slice went', async () =>
      (await modelReady(ns, 'gbt'))?.message?.includes('no EndpointSlice lists an endpoint for it'),
    );
    await eventually('the endpoint shows the model not ready', async () => {
      const models = (await getJson(ns, 'predictionendpoint/scoring')).status?.deployedModels as
        { ready?: string; reason?: string }[] | undefined;
      return models?.[0]?.ready === 'False' && models[0].reason === 'BackendUnavailable';
    });
  });

  it('does not probe a URL backend: Ready at once', async () => {
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: remote }
spec:
  endpointRef: { name: scoring }
  model: projects/p/locations/l/models/remote
  automaticResources: { minReplicaCount: 1 }
  backend: { url: "https://models.invalid:8443", protocol: OpenInferenceV2, modelName: remote }
`,
    );
    await waitReady(ns, 'deployedmodel/remote', 30);
    expect((await modelReady(ns, 'remote'))?.message).toContain(
      'served by https://models.invalid:8443 (a URL backend is not probed)',
    );
  });

  it('names endpoints by namespace, so equal names in two namespaces differ, and publishes the URL to call', async () => {
    const other = await createTestNamespace('backends-other');
    const second = await runOperator(other, { project: '{namespace}', gatewayUrl: GATEWAY });
    try {
      await apply(other, endpointYaml('scoring'));
      await eventually('both named', async () => (await getJson(other, 'predictionendpoint/scoring')).status?.name);
      const a = await getJson(ns, 'predictionendpoint/scoring');
      const b = await getJson(other, 'predictionendpoint/scoring');
      expect(a.status?.name).toBe(`projects/${ns}/locations/europe-west4/endpoints/scoring`);
      expect(b.status?.name).toBe(`projects/${other}/locations/europe-west4/endpoints/scoring`);
      expect(b.status?.url).toBe(`${GATEWAY}/v1/projects/${other}/locations/europe-west4/endpoints/scoring`);
    } finally {
      await second.stop();
    }
  });
});

describe('status.name migration', () => {
  it('rewrites a status.name of the old scheme when the operator (upgraded) starts', async () => {
    const ns = await createTestNamespace('name-migration');
    await apply(ns, endpointYaml('legacy'));
    // What an operator of the old scheme wrote: one fixed project for every namespace.
    const client = testClient();
    const ref = {
      group: 'prediction.endpoint-operator.dev',
      version: 'v1',
      plural: 'predictionendpoints',
      namespaced: true,
    };
    const oldName = 'projects/endpoint-operator/locations/europe-west4/endpoints/legacy';
    await client.patch(ref, ns, 'legacy', { status: { name: oldName } }, { type: 'merge', subresource: 'status' });
    client.close();
    expect((await getJson(ns, 'predictionendpoint/legacy')).status?.name).toBe(oldName);
    const op = await runOperator(ns, { project: '{namespace}' });
    try {
      await eventually(
        'the name rewritten',
        async () =>
          (await getJson(ns, 'predictionendpoint/legacy')).status?.name ===
          `projects/${ns}/locations/europe-west4/endpoints/legacy`,
      );
    } finally {
      await op.stop();
    }
  });
});
