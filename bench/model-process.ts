/**
 * A demo KServe V1 model server in a process of its own, for gateway benchmarks: thousands of calls a
 * second would otherwise share the sending process's event loop (and its clock). `startModelProcess`
 * forks this file; run so, it serves, sends its port over IPC, and exits on any IPC message.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startDemoModelServer } from '../src/demo-models/index.js';

const self = fileURLToPath(import.meta.url);

export function startModelProcess(modelName: string): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(self, ['--serve', modelName], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`model process exited with ${code}`)));
  });
}

if (process.argv[1] === self && process.argv[2] === '--serve') {
  const server = await startDemoModelServer({ protocol: 'KServeV1', modelName: process.argv[3] ?? 'model', version: 'v1' });
  process.send?.({ port: server.port });
  process.on('message', () => process.exit(0));
}
