/**
 * Shared by the tests of containerSpec models on the real node: a control plane of their own with the machine's
 * real node (test/support/real-node.ts), the model-server images (dev/models/model-server-image.ts) in the node's
 * registry, the machine catalogue that places models' replicas on that node, the operator and the gateway (TLS)
 * in-process, the official Vertex Python client, and what scikit-learn computes for the instances the tests send.
 */
import { join } from 'node:path';
import yaml from 'js-yaml';
import { pino } from 'pino';
import { Agent } from 'undici';
import type { MachineCatalogue } from '../../../src/api/prediction/v1/machine-catalogue.js';
import type { ControlPlane } from '../../../dev/cluster/index.js';
import { ensureIrisModel, IRIS_INSTANCES, irisPredictions } from '../../../dev/models/iris-model.js';
import { publishToNodeRegistry } from '../../../dev/cluster/real-node/node-images.js';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import { SHUTDOWN_DRAIN_MS } from '../../../src/cli/gateway.js';
import { startTcpRelay } from '../../../dev/host/tcp-relay.js';
import { NO_AUTH, type AuthSettings } from '../../../src/gateway/auth/settings.js';
import { GatewayServer } from '../../../src/gateway/server.js';
import {
  ensureModelServerImage,
  MODEL_SERVER_IMAGE_CONTRACT,
  type ModelServerImageKind,
} from '../../../dev/models/model-server-image.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { MACHINE_TYPES_CONFIGMAP, MACHINE_TYPES_KEY } from '../../../src/deploy/machine-types.js';
import { installCrds } from '../../../src/operator/crds.js';
import { startOperator, type RunningOperator } from '../../../src/operator/start.js';
import { kubectl, type KubectlResult } from '../../support/cluster.js';
import { testGatewayTls, writeGatewayTlsFiles, type TestGatewayTls } from '../../support/gateway-tls.js';
import { REAL_NODE_CATALOGUE, startRealNodeCluster } from '../../support/real-node.js';
import { runVertexSdk, startNotebookKernel, type NotebookKernel } from '../../support/vertex-sdk.js';

const OPERATOR_NAMESPACE = 'endpoint-operator-system';

export interface RealNodeServing extends RealNodeGateway {
  /** The images in the node's registry, by kind. */
  readonly images: Readonly<Record<ModelServerImageKind, string>>;
  /** What scikit-learn predicts for IRIS_INSTANCES. */
  readonly expected: readonly number[];
  /** The official Vertex Python client, run with one of vertex_sdk_client.py's scenarios; its JSON answer. */
  sdk(...args: string[]): Promise<Record<string, unknown>>;
  /** A notebook kernel (vertex_sdk_notebook.py: the SDK's write flow, cell by cell) of the caller whose token is `token`. */
  notebookKernel(token: string): NotebookKernel;
}

/** Polls `check` every 250 ms until it gives a value (a throw counts as none), for at most `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function manifests(...objects: readonly object[]): string {
  return objects.map((o) => yaml.dump(o)).join('---\n');
}

const log = (line: string): void => console.error(`[real node serving] ${line}`);

/** A real-node plane with the operator and the gateway (TLS) in this process, watching one namespace. */
export interface RealNodeGateway {
  readonly plane: ControlPlane;
  readonly namespace: string;
  /** https://127.0.0.1:PORT of the gateway, and an HTTP client that trusts its CA. */
  readonly gatewayUrl: string;
  readonly gatewayPort: number;
  readonly tls: TestGatewayTls;
  /** The gateway's CA as a file, for the Python SDK's processes. */
  readonly caFile: string;
  readonly agent: Agent;
  /** kubectl against this plane, in the test namespace unless the arguments name another. */
  k(args: readonly string[], input?: string): Promise<KubectlResult>;
  /**
   * A rollout of the gateway, as callers see one: a new gateway starts, the address moves to it, the old one drains
   * (`Connection: close` on HTTP/1.1, GOAWAY on HTTP/2) and closes.
   */
  restartGateway(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The plane (its real node), `catalogue` as the machine catalogue, the operator and the gateway (callers
 * authenticated as `auth` says: none by default); stops what it started when a step fails. `name` names the test
 * file in the plane's log lines.
 */
export async function startRealNodeGateway(
  name: string,
  namespace: string,
  catalogue: MachineCatalogue,
  auth: AuthSettings = NO_AUTH,
): Promise<RealNodeGateway> {
  const tls = await testGatewayTls();
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch((err: unknown) => log(`stopping: ${String(err)}`));
  };
  try {
    const plane = await startRealNodeCluster(name);
    stops.push(() => plane.stop());
    const k = (args: readonly string[], input?: string): Promise<KubectlResult> =>
      kubectl(['-n', namespace, ...args], {
        kubeconfig: plane.kubeconfigPath,
        timeoutMs: 600_000,
        ...(input !== undefined ? { input } : {}),
      });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    stops.push(async () => client.close());
    // No webhook runs here: new CRDs point their conversion at a closed port, and the tests use v1 only.
    await installCrds(client, { crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    const setUp = await kubectl(['apply', '-f', '-'], {
      kubeconfig: plane.kubeconfigPath,
      input: manifests(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: MACHINE_TYPES_CONFIGMAP, namespace: OPERATOR_NAMESPACE },
          data: { [MACHINE_TYPES_KEY]: JSON.stringify(catalogue) },
        },
      ),
    });
    if (setUp.code !== 0) throw new Error(`kubectl apply of the namespaces and the catalogue: ${setUp.stderr}`);
    // The ReplicaSet controller cannot create pods before the namespace's default ServiceAccount exists.
    const account = await k(['wait', '--for=create', 'serviceaccount/default', '--timeout=60s']);
    if (account.code !== 0) throw new Error(`no default ServiceAccount in ${namespace}: ${account.stderr}`);

    const operator: RunningOperator = await startOperator({
      client,
      settings: {
        project: '{namespace}',
        location: 'europe-west4',
        namespaces: [namespace],
        workers: 2,
        leaderElection: { enabled: false, namespace: OPERATOR_NAMESPACE, leaseName: 'endpoint-operator' },
        machineCatalogueConfigMap: MACHINE_TYPES_CONFIGMAP,
      },
      log: pino({ level: process.env['EO_TEST_OPERATOR_LOG'] ?? 'silent' }),
    });
    stops.push(() => operator.stop());
    await operator.ready;

    const openGateway = async (port: number): Promise<{ gateway: GatewayServer; port: number }> => {
      const gateway = await GatewayServer.create({
        client,
        namespaces: [namespace],
        listen: { host: '127.0.0.1', port },
        log: pino({ level: process.env['EO_TEST_GATEWAY_LOG'] ?? 'silent' }),
        upstreamTimeoutMs: 10_000,
        bodyLimitBytes: 64 * 1024,
        stickyHeader: 'x-eo-sticky-key',
        auth,
        tls: { cert: tls.cert, key: tls.key },
        shutdownDrainMs: SHUTDOWN_DRAIN_MS,
      });
      return { gateway, port: (await gateway.start()).port };
    };
    // Callers reach the gateway as they reach its pods: through one address (a Service's) that a rollout moves to
    // the new gateway once it serves, while the old one drains. Closing one port and opening it again would refuse
    // connections in between, which no rollout does and Google's REST clients rightly do not retry.
    let current = await openGateway(0);
    stops.push(() => current.gateway.close());
    const service = await startTcpRelay({ host: '127.0.0.1', port: 0 }, () => current.port);
    stops.push(() => service.close());
    const { port } = service;
    const restartGateway = async (): Promise<void> => {
      const old = current;
      current = await openGateway(0);
      await old.gateway.close();
    };
    const agent = new Agent({ connections: 32, connect: { ca: tls.ca } });
    stops.push(() => agent.close());
    const tlsFiles = await writeGatewayTlsFiles(tls);
    stops.push(() => tlsFiles.remove());
    return {
      plane,
      namespace,
      gatewayUrl: `https://127.0.0.1:${port}`,
      gatewayPort: port,
      tls,
      caFile: tlsFiles.caFile,
      agent,
      k,
      restartGateway,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The images, the plane, the catalogue, the operator and the gateway; stops what it started when a step fails. */
export async function startRealNodeServing(
  namespace: string,
  auth: AuthSettings = NO_AUTH,
  name = 'models',
): Promise<RealNodeServing> {
  // Built (or found) before the plane starts: the real node is the machine's one, held no longer than needed.
  const local = {
    'vertex-sklearn': await ensureModelServerImage('vertex-sklearn', log),
    mlserver: await ensureModelServerImage('mlserver', log),
  };
  const mlserverPython = await ensurePythonPackages('mlserver', log);
  const expected = await irisPredictions(mlserverPython, await ensureIrisModel(mlserverPython), IRIS_INSTANCES);
  const sdkPython = await ensurePythonPackages('aiplatform-sdk', log);

  const served = await startRealNodeGateway(name, namespace, REAL_NODE_CATALOGUE, auth);
  try {
    const pushStarted = Date.now();
    const logFile = join(served.plane.dataDir, 'logs', 'model-server-images.log');
    const images = {
      'vertex-sklearn': await publishToNodeRegistry(local['vertex-sklearn'], logFile),
      mlserver: await publishToNodeRegistry(local.mlserver, logFile),
    };
    log(`images in the node's registry after ${((Date.now() - pushStarted) / 1000).toFixed(1)} s`);
    return {
      ...served,
      images,
      expected,
      sdk: (...args) => runVertexSdk(sdkPython, { port: served.gatewayPort, caFile: served.caFile }, args),
      notebookKernel: (token) =>
        startNotebookKernel(sdkPython, { port: served.gatewayPort, caFile: served.caFile }, token),
    };
  } catch (err) {
    await served.stop();
    throw err;
  }
}

/** A DeployedModel whose replicas run `image` (one of the model-server images unless said otherwise). */
export function containerModel(
  name: string,
  endpoint: string,
  id: string,
  containerSpec: Record<string, unknown>,
  artifactUri: string | undefined = MODEL_SERVER_IMAGE_CONTRACT.modelDir,
): object {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name },
    spec: {
      endpointRef: { name: endpoint },
      id,
      model: `projects/demo-project/locations/europe-west4/models/${name}@1`,
      displayName: name,
      automaticResources: { minReplicaCount: 1 },
      containerSpec,
      ...(artifactUri !== undefined ? { artifactUri } : {}),
    },
  };
}

export function endpoint(name: string, trafficSplit: Record<string, number>): object {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name },
    spec: { displayName: name, trafficSplit },
  };
}

/** The two real servers' containerSpecs: Google's Vertex server (Vertex protocol, its default routes from AIP_*) and MLServer. */
export function vertexServer(images: RealNodeServing['images']): Record<string, unknown> {
  return { imageUri: images['vertex-sklearn'] };
}

export function mlserverServer(images: RealNodeServing['images']): Record<string, unknown> {
  return {
    imageUri: images.mlserver,
    protocol: 'OpenInferenceV2',
    modelName: MODEL_SERVER_IMAGE_CONTRACT.modelName,
    healthRoute: MODEL_SERVER_IMAGE_CONTRACT.routes.mlserver.health,
  };
}
