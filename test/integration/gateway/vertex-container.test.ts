/**
 * A DeployedModel whose `spec.containerSpec` speaks Vertex AI's custom-container protocol (the default):
 * the operator runs it (Deployment and Service; kwok makes its pods Ready), and the gateway posts the
 * `:predict` body as it came to the container's predict route. The pods are simulated, so the server that
 * answers is a real one in the model host, added to the Service as an EndpointSlice of the test's own.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace, testCluster } from '../../support/cluster.js';
import { VertexContainerServer } from './vertex-container-server.js';
import {
  apply,
  CapturedLog,
  eventually,
  getJson,
  post,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

let env: GatewayEnv;
let container: VertexContainerServer;
let gateway: GatewayServer;
let base = '';
let name = '';

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('gateway-vertex'));
  container = new VertexContainerServer((i) => ({ score: i + 0.5 }));
  const port = await container.start();
  ({ gateway, url: base } = await startGateway(env, new CapturedLog().logger));
  const ns = env.namespace;
  await apply(
    ns,
    [
      {
        apiVersion: 'prediction.endpoint-operator.dev/v1',
        kind: 'PredictionEndpoint',
        metadata: { name: 'vx' },
        spec: { displayName: 'Vertex container', trafficSplit: { '7': 100 } },
      },
      {
        apiVersion: 'prediction.endpoint-operator.dev/v1',
        kind: 'DeployedModel',
        metadata: { name: 'vertex-model' },
        spec: {
          endpointRef: { name: 'vx' },
          id: '7',
          model: 'projects/demo-project/locations/europe-west4/models/vertex-model@1',
          containerSpec: {
            imageUri: 'registry.example/vertex-model:1',
            predictRoute: '/predict',
            healthRoute: '/health',
          },
          automaticResources: { minReplicaCount: 1 },
        },
      },
      // The simulated pods' addresses are unreachable: the server that answers is this one.
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'dm-vertex-model-host',
          labels: {
            'kubernetes.io/service-name': 'dm-vertex-model',
            'endpointslice.kubernetes.io/managed-by': 'gateway-test',
          },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port, protocol: 'TCP' }],
        endpoints: [{ addresses: [testCluster().modelHost.address], conditions: { ready: true } }],
      },
    ]
      .map((d) => yaml.dump(d))
      .join('---\n'),
  );
  name = await waitDeployed(ns, 'vx', ['7']);
  await eventually(
    'the split in effect',
    async () => JSON.stringify((await getJson(ns, 'predictionendpoint/vx')).status?.trafficSplit) === '{"7":100}',
    120_000,
  );
}, 240_000);

afterAll(async () => {
  await gateway?.close();
  await container?.close();
  await env?.operator.stop();
});

describe('the Vertex custom-container protocol', () => {
  it(':predict posts the body as it came to the predict route and answers in Vertex form', async () => {
    const request = { instances: [{ amount: 35 }, { amount: 900 }], parameters: { threshold: 0.7 } };
    // One of the Service's targets is a simulated pod: a connect failure there is retried on the other.
    const r = await eventually('an answer', async () => {
      const answer = await post(`${base}/v1/${name}:predict`, request);
      return answer.status === 200 ? answer : undefined;
    });
    expect(r.json).toMatchObject({ predictions: [{ score: 0.5 }, { score: 1.5 }], deployedModelId: '7' });
    expect(container.received.at(-1)).toEqual({ path: '/predict', body: request });
  });

  it(':rawPredict posts its body unchanged to the same route', async () => {
    const r = await post(`${base}/v1/${name}:rawPredict`, { instances: [[1, 2]] });
    expect(r.status, r.text).toBe(200);
    expect(container.received.at(-1)).toEqual({ path: '/predict', body: { instances: [[1, 2]] } });
  });

  it(':explain is FAILED_PRECONDITION: the protocol has no explain route', async () => {
    const r = await post(`${base}/v1/${name}:explain`, { instances: [{ amount: 35 }] });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      error: { status: 'FAILED_PRECONDITION', message: expect.stringContaining('no explain route') },
    });
  });
});
