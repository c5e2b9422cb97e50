/**
 * A demo KServe V1 model server in a process of its own, for gateway benchmarks: thousands of calls a
 * second would otherwise share the sending process's event loop (and its clock). `startModelProcess`
 * runs this file in the control plane's model host (the apiserver refuses loopback addresses in
 * EndpointSlices, so the server listens at the host's address); run so, it serves, sends its port over
 * IPC, and exits on any IPC message.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDemoModelServer } from '../dev/models/demo/index.js';
import type { ModelHost } from '../dev/cluster/network.js';
import { startHelperProcess } from './gateway-fixture.js';

const self = fileURLToPath(import.meta.url);

export function startModelProcess(
  modelHost: Pick<ModelHost, 'netns' | 'address'>,
  modelName: string,
): Promise<{ child: ChildProcess; port: number }> {
  return startHelperProcess(self, ['--serve', modelName, '--host', modelHost.address], { modelHost, what: 'model' });
}

if (process.argv[1] === self && process.argv[2] === '--serve') {
  const { values } = parseArgs({ args: process.argv.slice(4), options: { host: { type: 'string' } } });
  const server = await startDemoModelServer({
    protocol: 'KServeV1',
    modelName: process.argv[3] ?? 'model',
    version: 'v1',
    host: values.host,
  });
  process.send?.({ port: server.port });
  process.on('message', () => process.exit(0));
}
