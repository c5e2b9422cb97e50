/**
 * What the gateway benchmarks share: the objects the gateway routes by, written as the operator would
 * leave them (status included), and the gateway as shipped (the compiled binary in its own process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { discoverEndpointSliceVersion, endpointSlicesResource, servicesResource } from '../src/runtime/endpoint-slices.js';
import type { KubeClient } from '../src/runtime/kube-client.js';
import { resources } from '../src/reconcilers/context.js';

/** `projects/bench/locations/local/endpoints/fraud`: the endpoint writeObjects creates by default. */
export const RESOURCE_NAME = 'projects/bench/locations/local/endpoints/fraud';

/**
 * Namespace `ns` with one PredictionEndpoint (`fraud`) whose one deployed model is the KServe V1 server
 * `model` on `modelPort`, published as `resourceName`.
 */
export async function writeObjects(client: KubeClient, ns: string, model: string, modelPort: number, resourceName = RESOURCE_NAME): Promise<void> {
  await client.create({ group: '', version: 'v1', plural: 'namespaces', namespaced: false }, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const sliceVersion = await discoverEndpointSliceVersion(client, ns);
  await client.create(servicesResource, ns, { apiVersion: 'v1', kind: 'Service', metadata: { name: model }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
  await client.create(endpointSlicesResource(sliceVersion), ns, {
    apiVersion: `discovery.k8s.io/${sliceVersion}`, kind: 'EndpointSlice',
    metadata: { name: `${model}-0`, labels: { 'kubernetes.io/service-name': model } },
    addressType: 'IPv4', ports: [{ name: 'http', port: modelPort, protocol: 'TCP' }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  });
  await client.create(resources.deployedModels, ns, {
    apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'DeployedModel', metadata: { name: model },
    spec: { endpointRef: { name: 'fraud' }, id: '1', model: 'projects/bench/locations/local/models/fraud@1', automaticResources: { minReplicaCount: 1 }, backend: { service: { name: model, port: 'http' }, protocol: 'KServeV1', modelName: model } },
  });
  await client.create(resources.predictionEndpoints, ns, { apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'PredictionEndpoint', metadata: { name: 'fraud' }, spec: { displayName: 'fraud', trafficSplit: { '1': 100 } } });
  await client.patch(resources.predictionEndpoints, ns, 'fraud', { status: { name: resourceName, deployedModels: [{ id: '1', model: 'projects/bench/locations/local/models/fraud@1', deployedModelRef: model }] } }, { type: 'merge', subresource: 'status' });
}

/**
 * The gateway as shipped: the compiled binary (`npm run bench` builds first), in its own process, logging
 * as in production, serving namespace `ns`. Its port is read from its "gateway serving" log line.
 */
export function startGatewayBinary(kubeconfig: string, ns: string, extraFlags: readonly string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const bin = fileURLToPath(new URL('../bin/endpoint-operator.js', import.meta.url));
  if (!existsSync(fileURLToPath(new URL('../dist/src/main.js', import.meta.url)))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
  const prof = process.env['EO_BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=/tmp/eo-gateway-prof'] : [];
  const flags = (process.env['EO_BENCH_GATEWAY_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
  const child = spawn(process.execPath, [...prof, ...flags, bin, 'gateway', '--kubeconfig', kubeconfig, '--namespaces', ns, '--bind-address', '127.0.0.1', '--port', '0', '--health-port=-1', ...extraFlags], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  return new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return void console.error(`[gateway] ${line}`); // e.g. --trace-gc lines
      const record = JSON.parse(line) as { msg?: string; port?: number };
      if (record.msg === 'gateway serving' && typeof record.port === 'number') resolve({ child, port: record.port });
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
  });
}
