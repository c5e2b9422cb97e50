/**
 * Shared by the gateway integration tests: a namespace with the operator running (so endpoints get
 * their status.name and deployed models), demo model servers on loopback behind selector-less
 * Services whose EndpointSlices list loopback addresses (no controller-manager runs), and an HTTP
 * client for the gateway.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import yaml from 'js-yaml';
import { pino, type Logger } from 'pino';
import { Agent, request } from 'undici';
import type { BackendProtocol } from '../../../src/api/prediction/v1/backend.js';
import { NO_AUTH } from '../../../src/gateway/auth/settings.js';
import { GatewayServer, type GatewayPlugin } from '../../../src/gateway/server.js';
import { discoverEndpointSliceVersion, type EndpointSliceVersion } from '../../../src/runtime/endpoint-slices.js';
import { REPO_ROOT } from '../../support/examples.js';
import { apply, eventually, getJson, installCrds, runOperator, testClient, type TestOperator } from '../reconcilers/harness.js';

export { apply, eventually, getJson };

export interface Backend {
  /** Service name; also the model name on the server. */
  readonly name: string;
  readonly protocol: BackendProtocol;
  /** Loopback ports of the servers behind the Service (one EndpointSlice each). */
  readonly ports: readonly number[];
}

/** A selector-less Service with one named port, and one EndpointSlice per server (its own target port). */
export function serviceManifest(backend: Backend, sliceVersion: EndpointSliceVersion, ready: readonly boolean[] = []): string {
  const docs: unknown[] = [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: backend.name }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    ...backend.ports.map((port, i) => ({
      apiVersion: `discovery.k8s.io/${sliceVersion}`,
      kind: 'EndpointSlice',
      metadata: { name: `${backend.name}-${i}`, labels: { 'kubernetes.io/service-name': backend.name, 'endpointslice.kubernetes.io/managed-by': 'gateway-test' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: ready[i] ?? true } }],
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

export function endpointManifest(name: string, split: Record<string, number>, models: readonly ModelSpec[], extraSpec: Record<string, unknown> = {}): string {
  const docs: unknown[] = [
    { apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'PredictionEndpoint', metadata: { name }, spec: { displayName: `gateway test ${name}`, trafficSplit: split, ...extraSpec } },
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
        ...(m.backend ? { backend: { service: { name: m.backend.service, port: 'http' }, protocol: m.backend.protocol, modelName: m.backend.service } } : {}),
      },
    })),
  ];
  return docs.map((d) => yaml.dump(d)).join('---\n');
}

/** Waits until the endpoint's status lists `ids` as deployed; returns its status.name. */
export async function waitDeployed(namespace: string, endpoint: string, ids: readonly string[]): Promise<string> {
  return eventually(`${endpoint} deploys ${ids.join(',')}`, async () => {
    const pe = await getJson(namespace, `predictionendpoint/${endpoint}`);
    const status = pe.status as { name?: string; deployedModels?: Array<{ id: string }> } | undefined;
    const got = new Set((status?.deployedModels ?? []).map((d) => d.id));
    return status?.name !== undefined && ids.every((id) => got.has(id)) ? status.name : undefined;
  }, 60_000);
}

export interface GatewayEnv {
  readonly namespace: string;
  readonly operator: TestOperator;
  readonly sliceVersion: EndpointSliceVersion;
}

export async function setUpNamespace(namespace: string): Promise<GatewayEnv> {
  const crdClient = testClient();
  await installCrds(crdClient);
  crdClient.close();
  const operator = await runOperator(namespace);
  return { namespace, operator, sliceVersion: await discoverEndpointSliceVersion(operator.client, namespace) };
}

/** Log lines a test can read back (request/response logging). */
export class CapturedLog {
  readonly records: Array<Record<string, unknown>> = [];
  readonly logger: Logger = pino({ level: 'info' }, new Writable({
    write: (chunk: Buffer, _enc, done) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') this.records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  }));
}

export async function startGateway(
  env: GatewayEnv, log: Logger, overrides: Partial<Parameters<typeof GatewayServer.create>[0]> = {}, plugins: readonly GatewayPlugin[] = [],
): Promise<{ gateway: GatewayServer; url: string; healthPort: number | undefined }> {
  const gateway = await GatewayServer.create({
    client: env.operator.client,
    namespaces: [env.namespace],
    listen: { host: '127.0.0.1', port: 0 },
    log,
    endpointSliceVersion: env.sliceVersion,
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

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(url, {
    method: 'POST',
    dispatcher: client,
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
export async function spawnModelServer(protocol: BackendProtocol, model: string, version: 'v1' | 'v2'): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/demo-models/main.ts'), '--protocol', protocol, '--model', model, '--version', version], {
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
