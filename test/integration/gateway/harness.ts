/**
 * Shared by the gateway integration tests: a namespace with the operator running (so endpoints get
 * their status.name and deployed models), model servers listening in the test cluster's model host
 * (a network namespace: the apiserver refuses loopback addresses in EndpointSlices) behind
 * selector-less Services whose EndpointSlices list the host's address, and an HTTP client for the gateway.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import yaml from 'js-yaml';
import { pino, type Logger } from 'pino';
import { Agent, request } from 'undici';
import type { BackendProtocol } from '../../../src/api/prediction/v1/backend.js';
import { NO_AUTH } from '../../../src/gateway/auth/settings.js';
import { GatewayServer, type GatewayPlugin } from '../../../src/gateway/server.js';
import {
  startDemoModelServer,
  type DemoModelServerOptions,
  type RunningDemoModelServer,
} from '../../../dev/models/demo/index.js';
import { listenInModelHost } from '../../../dev/cluster/model-host.js';
import { inModelHost } from '../../../dev/cluster/network.js';
import { testCluster } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { whenGatewayServes } from '../../support/gateway-serving.js';
import { apply, eventually, getJson, runOperatorWithCrds, type TestOperator } from '../reconcilers/harness.js';

export { apply, eventually, getJson };

export interface Backend {
  /** Service name; also the model name on the server. */
  readonly name: string;
  readonly protocol: BackendProtocol;
  /** Ports of the servers in the model host behind the Service (one EndpointSlice each). */
  readonly ports: readonly number[];
}

/** A selector-less Service with one named port, and one EndpointSlice per server (its own target port). */
export function serviceManifest(backend: Backend, ready: readonly boolean[] = []): string {
  const address = testCluster().modelHost.address;
  const docs: unknown[] = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: backend.name },
      spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    },
    ...backend.ports.map((port, i) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${backend.name}-${i}`,
        labels: {
          'kubernetes.io/service-name': backend.name,
          'endpointslice.kubernetes.io/managed-by': 'gateway-test',
        },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port, protocol: 'TCP' }],
      endpoints: [{ addresses: [address], conditions: { ready: ready[i] ?? true } }],
    })),
  ];
  return docs.map((d) => yaml.dump(d)).join('---\n');
}

export interface ModelSpec {
  readonly name: string;
  readonly id: string;
  readonly backend?: { service: string; protocol: BackendProtocol };
  readonly model?: string;
}

export function endpointManifest(
  name: string,
  split: Record<string, number>,
  models: readonly ModelSpec[],
  extraSpec: Record<string, unknown> = {},
): string {
  const docs: unknown[] = [
    {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name },
      spec: { displayName: `gateway test ${name}`, trafficSplit: split, ...extraSpec },
    },
    ...models.map((m) => ({
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: m.name },
      spec: {
        endpointRef: { name },
        id: m.id,
        model: m.model ?? `projects/demo-project/locations/europe-west4/models/${m.name}@1`,
        displayName: `${m.name} display`,
        automaticResources: { minReplicaCount: 1 },
        ...(m.backend
          ? {
              backend: {
                service: { name: m.backend.service, port: 'http' },
                protocol: m.backend.protocol,
                modelName: m.backend.service,
              },
            }
          : {}),
      },
    })),
  ];
  return docs.map((d) => yaml.dump(d)).join('---\n');
}

/**
 * The endpoint most gateway tests call: `fraud`, split 70/30 between the demo fraud model's two versions, over
 * KServe V1 (id 1) and Open Inference V2 (id 2), each a model server of its own in the model host. Resolves once both
 * are deployed, with the endpoint's status.name and the servers (to close after).
 */
export async function deployFraudSplit(
  namespace: string,
  extraSpec: Record<string, unknown> = {},
): Promise<{ endpointName: string; servers: readonly RunningDemoModelServer[] }> {
  const v1 = await startModelServer({ protocol: 'KServeV1', modelName: 'fraud-v1', version: 'v1' });
  const v2 = await startModelServer({ protocol: 'OpenInferenceV2', modelName: 'fraud-v2', version: 'v2' });
  await apply(namespace, serviceManifest({ name: 'fraud-v1', protocol: 'KServeV1', ports: [v1.port] }));
  await apply(namespace, serviceManifest({ name: 'fraud-v2', protocol: 'OpenInferenceV2', ports: [v2.port] }));
  await apply(
    namespace,
    endpointManifest(
      'fraud',
      { '1': 70, '2': 30 },
      [
        { name: 'fraud-champion', id: '1', backend: { service: 'fraud-v1', protocol: 'KServeV1' } },
        { name: 'fraud-challenger', id: '2', backend: { service: 'fraud-v2', protocol: 'OpenInferenceV2' } },
      ],
      extraSpec,
    ),
  );
  return { endpointName: await waitDeployed(namespace, 'fraud', ['1', '2']), servers: [v1, v2] };
}

/** Waits until the endpoint's status lists `ids` as deployed; returns its status.name. */
export async function waitDeployed(namespace: string, endpoint: string, ids: readonly string[]): Promise<string> {
  return eventually(
    `${endpoint} deploys ${ids.join(',')}`,
    async () => {
      const pe = await getJson(namespace, `predictionendpoint/${endpoint}`);
      const status = pe.status as { name?: string; deployedModels?: Array<{ id: string }> } | undefined;
      const got = new Set((status?.deployedModels ?? []).map((d) => d.id));
      return status?.name !== undefined && ids.every((id) => got.has(id)) ? status.name : undefined;
    },
    60_000,
  );
}

export interface GatewayEnv {
  readonly namespace: string;
  readonly operator: TestOperator;
}

export async function setUpNamespace(namespace: string): Promise<GatewayEnv> {
  return { namespace, operator: await runOperatorWithCrds(namespace) };
}

/** Log lines a test can read back (request/response logging). */
export class CapturedLog {
  readonly records: Array<Record<string, unknown>> = [];
  readonly logger: Logger = pino(
    { level: 'info' },
    new Writable({
      write: (chunk: Buffer, _enc, done) => {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line.trim() !== '') this.records.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
}

export async function startGateway(
  env: GatewayEnv,
  log: Logger,
  overrides: Partial<Parameters<typeof GatewayServer.create>[0]> = {},
  plugins: readonly GatewayPlugin[] = [],
): Promise<{ gateway: GatewayServer; url: string; healthPort: number | undefined }> {
  const gateway = await GatewayServer.create({
    client: env.operator.client,
    namespaces: [env.namespace],
    listen: { host: '127.0.0.1', port: 0 },
    log,
    upstreamTimeoutMs: 10_000,
    bodyLimitBytes: 64 * 1024,
    stickyHeader: 'x-eo-sticky-key',
    // Auth is the subject of gateway/auth.test.ts only; the other gateway tests call without tokens.
    auth: NO_AUTH,
    ...overrides,
  });
  for (const plugin of plugins) gateway.register(plugin);
  const { port, healthPort } = await gateway.start();
  return { gateway, url: `http://127.0.0.1:${port}`, healthPort };
}

export const client = new Agent({ connections: 64, keepAliveTimeout: 10_000 });

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads arbitrary answer shapes
  readonly text: string;
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  dispatcher: Agent = client,
): Promise<Answer> {
  const res = await request(url, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, json, text };
}

/** A demo model server in its own process (so a test can SIGKILL it). */
/** A socket listening in the model host (any free port unless given), for `server.listen(socket)`. */
export function modelHostSocket(port = 0): Promise<NetServer> {
  return listenInModelHost(testCluster().modelHost, port);
}

/** `server` listening in the model host; resolves to its port. */
export async function listenInHost(server: Server | NetServer): Promise<number> {
  const socket = await modelHostSocket();
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return (server.address() as AddressInfo).port;
}

/** A demo model server in this process, listening in the model host. */
export async function startModelServer(
  options: Omit<DemoModelServerOptions, 'host' | 'port' | 'socket'>,
): Promise<RunningDemoModelServer> {
  return startDemoModelServer({ ...options, host: testCluster().modelHost.address, socket: await modelHostSocket() });
}

/** A demo model server in a process of its own, run in the model host (so a test can kill it). */
export async function spawnModelServer(
  protocol: BackendProtocol,
  model: string,
  version: 'v1' | 'v2',
): Promise<{ port: number; child: ChildProcess }> {
  const host = testCluster().modelHost;
  const [cmd, args] = inModelHost(host, process.execPath, [
    '--import',
    'tsx',
    join(REPO_ROOT, 'dev/models/demo/main.ts'),
    '--protocol',
    protocol,
    '--model',
    model,
    '--version',
    version,
    '--host',
    host.address,
  ]);
  const child = spawn(cmd, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`model server exited with ${code}`)));
  });
  return { port, child };
}

/**
 * `endpoint-operator gateway` (the CLI, run by tsx) in a process of its own, over plain HTTP on loopback, `args` after
 * the common flags; resolves once it serves, to the port it bound. It binds port 0 unless given one (a restart on the
 * same port): a port found free beforehand can be taken by another socket before the gateway binds it.
 */
export async function spawnCliGateway(
  args: readonly string[],
  options: { readonly port?: number; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'test/support/run-cli.ts'),
      'gateway',
      // Called over plain HTTP, as behind a mesh that terminates TLS (the TLS port: grpc-*.test.ts).
      '--plain-http',
      '--kubeconfig',
      testCluster().kubeconfig,
      '--bind-address',
      '127.0.0.1',
      '--port',
      String(options.port ?? 0),
      ...args,
    ],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      ...(options.env !== undefined ? { env: options.env } : {}),
    },
  );
  const { port } = await whenGatewayServes(child);
  return { child, port };
}
