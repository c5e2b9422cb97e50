/**
 * What the gateway benchmarks share (B6 in gateway.ts, its auth arms in gateway-auth.ts, B6-fair in
 * gateway-fair.ts, the tracing arms in tracing.ts): the objects the gateway routes by, written as the
 * operator would leave them, the compiled gateway in its own process, and helper processes (model
 * servers in the control plane's model host).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endpointSlicesResource, servicesResource } from '../src/runtime/endpoint-slices.js';
import { KubeClient } from '../src/kube/kube-client.js';
import { startControlPlane, type ControlPlane } from '../dev/cluster/index.js';
import { installCrds } from '../src/operator/crds.js';
import { GATEWAY_NODE_FLAGS } from '../src/deploy/gateway.js';
import { inModelHost, type ModelHost } from '../dev/cluster/network.js';
import { resources } from '../src/api/kind-bindings.js';
import { whenGatewayServes, type ServingPorts } from '../test/support/gateway-serving.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * `node --import tsx <file> ...args` in a process of its own with an IPC channel, resolved once it sends
 * `{port}`. With `modelHost`, run in the control plane's model host (`ip netns exec` execs node, so the
 * pid, its CPU and the IPC channel are the server's own): the apiserver refuses loopback addresses in
 * EndpointSlices, so a model server the gateway reaches through a Service listens at the host's address
 * (the caller passes it in `args`, e.g. `--host`).
 */
export function startHelperProcess(
  file: string,
  args: readonly string[],
  options: { modelHost?: Pick<ModelHost, 'netns'>; what?: string; nodeFlags?: readonly string[] } = {},
): Promise<{ child: ChildProcess; port: number }> {
  const execArgv = [...(options.nodeFlags ?? []), '--import', 'tsx'];
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  let child: ChildProcess;
  if (options.modelHost === undefined) child = fork(file, [...args], { execArgv, stdio });
  else {
    const [cmd, cmdArgs] = inModelHost(options.modelHost, process.execPath, [...execArgv, file, ...args]);
    child = spawn(cmd, cmdArgs, { cwd: REPO_ROOT, stdio });
  }
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`${options.what ?? file} process exited with ${code}`)));
  });
}

/** A gateway process serving, and the ports it bound (both may have been given as 0: its log line says which). */
export interface StartedGateway extends ServingPorts {
  readonly child: ChildProcess;
}

/**
 * The gateway as shipped: the compiled binary (`npm run bench` builds first; `root`: another checkout's, built), in its own process, started
 * with the chart's node flags (GATEWAY_NODE_FLAGS), logging as in production. Its port is read from its
 * "gateway serving" log line.
 */
export function startGatewayBinary(
  kubeconfig: string,
  namespace: string,
  gatewayFlags: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    profileDir?: string;
    root?: string;
    /** Serve TLS (ALPN h2 and http/1.1) from these PEM files instead of plain HTTP. */
    tls?: { readonly certFile: string; readonly keyFile: string };
  } = {},
): Promise<StartedGateway> {
  const root = options.root ?? REPO_ROOT;
  const bin = join(root, 'bin/endpoint-operator.js');
  if (!existsSync(join(root, 'dist/src/main.js')))
    throw new Error(`${root}dist/ is missing: run \`npm run build\` (npm run bench does)`);
  const prof = process.env['EO_BENCH_CPU_PROF']
    ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir ?? '/tmp/eo-gateway-prof'}`]
    : [];
  // Node's flags as the chart runs the gateway, then the bench's additions.
  const flags = [
    ...GATEWAY_NODE_FLAGS,
    ...(process.env['EO_BENCH_GATEWAY_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== ''),
  ];
  const child = spawn(
    process.execPath,
    [
      ...prof,
      ...flags,
      bin,
      'gateway',
      // By default called over plain HTTP, as behind a mesh that terminates TLS (the TLS port's cost: bench/grpc.ts);
      // a commit from before the TLS port (B6-old-new's 4b8eaec) serves plain HTTP without the flag.
      ...(options.tls === undefined
        ? readFileSync(join(root, 'dist/src/cli/gateway.js'), 'utf8').includes("'plain-http'")
          ? ['--plain-http']
          : []
        : ['--tls-cert-file', options.tls.certFile, '--tls-key-file', options.tls.keyFile]),
      '--kubeconfig',
      kubeconfig,
      '--namespaces',
      namespace,
      '--bind-address',
      '127.0.0.1',
      '--port',
      '0',
      ...gatewayFlags,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], ...(options.env !== undefined ? { env: options.env } : {}) },
  );
  const serving = whenGatewayServes(child, (line) => console.error(`[gateway] ${line}`)); // e.g. --trace-gc lines
  return serving.then((ports) => ({ child, ...ports }));
}

/** `projects/bench/locations/local/endpoints/fraud`: the status.name the benchmarks publish by default. */
export const RESOURCE_NAME = 'projects/bench/locations/local/endpoints/fraud';

/** The objects the gateway routes by, written as the operator would leave them (status included). */
export interface RoutedEndpoint {
  readonly namespace: string;
  /** The Service, DeployedModel and model name. */
  readonly model: string;
  /** The endpoint's status.name. */
  readonly resourceName: string;
  /** Where the model server listens: the control plane's model host (`plane.modelHost.address`), not loopback, which the apiserver refuses in an EndpointSlice. */
  readonly modelAddress: string;
  readonly modelPort: number;
}

export async function writeObjects(client: KubeClient, target: RoutedEndpoint): Promise<void> {
  const { namespace: NS, model: MODEL, resourceName: RESOURCE_NAME, modelAddress, modelPort } = target;
  await client.create({ group: '', version: 'v1', plural: 'namespaces', namespaced: false }, undefined, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  await client.create(servicesResource, NS, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: MODEL },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  });
  await client.create(endpointSlicesResource, NS, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${MODEL}-0`, labels: { 'kubernetes.io/service-name': MODEL } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: modelPort, protocol: 'TCP' }],
    endpoints: [{ addresses: [modelAddress], conditions: { ready: true } }],
  });
  await client.create(resources.deployedModels, NS, {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name: MODEL },
    spec: {
      endpointRef: { name: 'fraud' },
      id: '1',
      model: 'projects/bench/locations/local/models/fraud@1',
      automaticResources: { minReplicaCount: 1 },
      backend: { service: { name: MODEL, port: 'http' }, protocol: 'KServeV1', modelName: MODEL },
    },
  });
  await client.create(resources.predictionEndpoints, NS, {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'fraud' },
    spec: { displayName: 'fraud', trafficSplit: { '1': 100 } },
  });
  await client.patch(
    resources.predictionEndpoints,
    NS,
    'fraud',
    {
      status: {
        name: RESOURCE_NAME,
        deployedModels: [{ id: '1', model: 'projects/bench/locations/local/models/fraud@1', deployedModelRef: MODEL }],
      },
    },
    { type: 'merge', subresource: 'status' },
  );
}

export function pctOf(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Stops the benchmark's child processes and waits for them: asked to exit (IPC 'stop' where there is a
 * channel, else SIGTERM; never SIGKILL first) so that a --cpu-prof profile gets written, killed after 10 s.
 */
export async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
          c.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          if (c.connected) c.send('stop');
          else c.kill('SIGTERM');
        }),
    ),
  );
}

/**
 * Open loop: call i is sent at start + i/rate whatever the answers do (a slow answer does not slow the
 * offered rate). No call is sent once `maxMs` have passed since the start (a bound on the run's time).
 */
export async function openLoop<T>(
  call: (i: number) => Promise<T>,
  count: number,
  rate: number,
  maxMs = Infinity,
): Promise<T[]> {
  const interval = 1000 / rate;
  const t0 = performance.now();
  const pending: Promise<T>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = t0 + i * interval - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    if (performance.now() - t0 > maxMs) break;
    pending.push(call(i));
  }
  return Promise.all(pending);
}

/** What a gateway benchmark runs against: a control plane with the CRDs, a model server process, the endpoint's objects. */
export interface GatewayBenchWorld {
  readonly plane: ControlPlane;
  readonly client: KubeClient;
  readonly model: { readonly child: ChildProcess; readonly port: number };
  /** Processes stopped when the benchmark ends (the model server's is one). */
  readonly children: ChildProcess[];
}

/**
 * Runs `bench` in a world of its own, everything stopped after; past `maxMs` (plus a grace for the
 * set-up and the stop) every process is killed and the benchmark exits 2. `startModel` starts the
 * model server in the control plane's model host (model-process.ts's startModelProcess).
 */
export async function withGatewayBenchWorld(
  label: string,
  target: Omit<RoutedEndpoint, 'modelAddress' | 'modelPort'>,
  maxMs: number,
  startModel: (host: ControlPlane['modelHost']) => Promise<{ child: ChildProcess; port: number }>,
  bench: (world: GatewayBenchWorld) => Promise<void>,
): Promise<void> {
  let plane: ControlPlane | undefined;
  const children: ChildProcess[] = [];
  const deadline = setTimeout(() => {
    console.error(`${label} exceeded ${maxMs / 1000} s; stopping`);
    for (const c of children) c.kill('SIGKILL');
    void (plane?.stop() ?? Promise.resolve()).finally(() => process.exit(2));
  }, maxMs + 180_000);
  try {
    plane = await startControlPlane({ log: (l) => console.error(`[control plane] ${l}`) });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    await installCrds(client, { crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    const model = await startModel(plane.modelHost);
    children.push(model.child);
    await writeObjects(client, { ...target, modelAddress: plane.modelHost.address, modelPort: model.port });
    await bench({ plane, client, model, children });
  } finally {
    clearTimeout(deadline);
    await stopChildren(children);
    await plane?.stop();
  }
}
