/**
 * The gateway against model servers nobody here wrote, installed from PyPI by the project's own scripts
 * (tools/python) and run as processes in the model host, each serving the iris model trained once with
 * scikit-learn: MLServer (`protocol: OpenInferenceV2`), KServe's model server (`KServeV1` and V2 on one port),
 * and Google's ModelServer for Vertex custom containers (a `containerSpec` model, the Vertex protocol: `spec.backend`
 * has no Vertex protocol). Every `:predict` must answer what scikit-learn computes locally for the same instances,
 * and a model server's own cause of a failure reaches the caller.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendProtocol } from '../../../src/api/prediction/v1/backend.js';
import { IRIS_INSTANCES, irisPredictions } from '../../../dev/models/iris-model.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace, testCluster } from '../../support/cluster.js';
import {
  startRealModelServer,
  VERTEX_ROUTES,
  type RealModelServer,
  type RealModelServerKind,
} from '../../support/real-model-servers.js';
import {
  apply,
  CapturedLog,
  eventually,
  post,
  serviceManifest,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

const CAUSE = 'ValueError: X has 2 features, but LogisticRegression is expecting 4 features as input.';

/** One PredictionEndpoint per served model, each model at 100 %. */
interface Served {
  readonly endpoint: string;
  readonly id: string;
  readonly server: string;
}
const SERVED = {
  mlserver: { endpoint: 'iris-mlserver', id: '1', server: 'mlserver' },
  kserveV1: { endpoint: 'iris-kserve-v1', id: '2', server: 'kserve' },
  kserveV2: { endpoint: 'iris-kserve-v2', id: '3', server: 'kserve' },
  mlserverInline: { endpoint: 'iris-mlserver-inline', id: '4', server: 'mlserver-inline' },
  vertex: { endpoint: 'iris-vertex', id: '5', server: 'vertex' },
} as const satisfies Record<string, Served>;

let env: GatewayEnv;
let gateway: GatewayServer | undefined;
let base = '';
const servers = new Map<string, RealModelServer>();
const names = new Map<string, string>();
let expected: number[] = [];

function endpointYaml(served: Served, model: Record<string, unknown>): string {
  const name = `${served.endpoint}-model`;
  return [
    {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name: served.endpoint },
      spec: { displayName: served.endpoint, trafficSplit: { [served.id]: 100 } },
    },
    {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name },
      spec: {
        endpointRef: { name: served.endpoint },
        id: served.id,
        model: `projects/demo-project/locations/europe-west4/models/${name}@1`,
        automaticResources: { minReplicaCount: 1 },
        ...model,
      },
    },
  ]
    .map((d) => yaml.dump(d))
    .join('---\n');
}

function backendYaml(served: Served, protocol: BackendProtocol): string {
  const server = servers.get(served.server);
  if (server === undefined) throw new Error(`no ${served.server} server`);
  return (
    serviceManifest({ name: served.server, protocol, ports: [server.port] }) +
    '---\n' +
    endpointYaml(served, {
      backend: { service: { name: served.server, port: 'http' }, protocol, modelName: server.modelName },
    })
  );
}

/** A containerSpec model (its pods simulated) whose Service lists the real server in an EndpointSlice of the test's. */
function vertexContainerYaml(served: Served): string {
  const server = servers.get(served.server);
  if (server === undefined) throw new Error(`no ${served.server} server`);
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `dm-${served.endpoint}-model-host`,
      labels: {
        'kubernetes.io/service-name': `dm-${served.endpoint}-model`,
        'endpointslice.kubernetes.io/managed-by': 'gateway-test',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: server.port, protocol: 'TCP' }],
    endpoints: [{ addresses: [server.address], conditions: { ready: true } }],
  };
  return (
    endpointYaml(served, {
      containerSpec: {
        imageUri: 'registry.example/vertex-sklearn:1',
        predictRoute: VERTEX_ROUTES.predict,
        healthRoute: VERTEX_ROUTES.health,
      },
    }) +
    '---\n' +
    yaml.dump(slice)
  );
}

const STARTS: ReadonlyArray<[string, RealModelServerKind, Record<string, string>]> = [
  ['mlserver', 'mlserver', {}],
  // In-process inference (no worker pool): an exception reaches the HTTP layer, which answers a plain-text traceback.
  ['mlserver-inline', 'mlserver', { MLSERVER_PARALLEL_WORKERS: '0' }],
  ['kserve', 'kserve', {}],
  ['vertex', 'vertex', {}],
];

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('real-servers'));
  const host = testCluster().modelHost;
  // In parallel: each set installs once (cached), and the servers start side by side.
  const started = await Promise.allSettled(
    STARTS.map(async ([name, kind, extra]) =>
      servers.set(name, await startRealModelServer(kind, host, { env: extra })),
    ),
  );
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const any = servers.get('mlserver') as RealModelServer;
  expected = await irisPredictions(any.python, any.modelDir, IRIS_INSTANCES);
  ({ gateway, url: base } = await startGateway(env, new CapturedLog().logger));
  const ns = env.namespace;
  await apply(
    ns,
    [
      backendYaml(SERVED.mlserver, 'OpenInferenceV2'),
      backendYaml(SERVED.kserveV1, 'KServeV1'),
      endpointYaml(SERVED.kserveV2, {
        backend: { service: { name: 'kserve', port: 'http' }, protocol: 'OpenInferenceV2', modelName: 'iris' },
      }),
      backendYaml(SERVED.mlserverInline, 'OpenInferenceV2'),
      vertexContainerYaml(SERVED.vertex),
    ].join('---\n'),
  );
  for (const served of Object.values(SERVED))
    names.set(served.endpoint, await waitDeployed(ns, served.endpoint, [served.id]));
}, 1_200_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([...servers.values()].map((s) => s.stop()));
  await env?.operator.stop();
});

/** `:predict` on the endpoint, retried while the gateway's view catches up (or, for the containerSpec model, a simulated pod refuses). */
async function predict(served: Served, instances: readonly unknown[]): Promise<Awaited<ReturnType<typeof post>>> {
  const name = names.get(served.endpoint) ?? '';
  return eventually(`${served.endpoint} answers`, async () => {
    const r = await post(`${base}/v1/${name}:predict`, { instances });
    return r.status === 503 || r.status === 404 ? undefined : r;
  });
}

describe('real model servers behind the gateway', () => {
  it('scikit-learn classifies the instances into all three classes (the comparison below can fail)', () => {
    expect(new Set(expected)).toEqual(new Set([0, 1, 2]));
  });

  it('MLServer (OpenInferenceV2) answers what scikit-learn computes: its [n, 1] output is one row per instance', async () => {
    const r = await predict(SERVED.mlserver, IRIS_INSTANCES);
    expect(r.status, r.text).toBe(200);
    expect(r.json.predictions).toEqual(expected.map((c) => [c]));
    expect(r.json.deployedModelId).toBe(SERVED.mlserver.id);
  });

  it('KServe (KServeV1) answers what scikit-learn computes', async () => {
    const r = await predict(SERVED.kserveV1, IRIS_INSTANCES);
    expect(r.status, r.text).toBe(200);
    expect(r.json.predictions).toEqual(expected);
    expect(r.json.deployedModelId).toBe(SERVED.kserveV1.id);
  });

  it('KServe over Open Inference V2 on the same port answers the same', async () => {
    const r = await predict(SERVED.kserveV2, IRIS_INSTANCES);
    expect(r.status, r.text).toBe(200);
    expect(r.json.predictions).toEqual(expected);
    expect(r.json.deployedModelId).toBe(SERVED.kserveV2.id);
  });

  it("Google's Vertex ModelServer (containerSpec, Vertex protocol) answers what scikit-learn computes", async () => {
    const r = await predict(SERVED.vertex, IRIS_INSTANCES);
    expect(r.status, r.text).toBe(200);
    expect(r.json.predictions).toEqual(expected);
    expect(r.json.deployedModelId).toBe(SERVED.vertex.id);
  });

  it("a wrong-shape call: MLServer's plain-text traceback is quoted by its cause, not its preamble", async () => {
    const r = await predict(SERVED.mlserverInline, [[1.0, 2.5]]);
    expect(r.status, r.text).toBe(502);
    expect(r.json.error.status).toBe('INTERNAL');
    expect(r.json.error.message).toMatch(/answered 500: ValueError: X has 2 features/);
    expect(r.json.error.message.endsWith(CAUSE)).toBe(true);
    expect(r.json.error.message).not.toContain('Traceback');
    // The server did answer a traceback: what the gateway quotes is its last line.
    expect(await servers.get('mlserver-inline')?.logTail(200)).toContain(CAUSE);
  });

  it.each([
    ['MLServer (worker pool)', SERVED.mlserver],
    ['KServe V1', SERVED.kserveV1],
    ['Vertex ModelServer', SERVED.vertex],
  ])('a wrong-shape call: %s gives its own cause to the caller', async (_, served) => {
    const r = await predict(served, [[1.0, 2.5]]);
    expect(r.status, r.text).toBe(502);
    expect(r.json.error.message).toContain('X has 2 features, but LogisticRegression is expecting 4 features');
  });
});
