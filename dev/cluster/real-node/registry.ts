/**
 * The local image registry the real node pulls from: the CNCF distribution registry (tools/registry), plain
 * HTTP on this namespace's end of the node's link (node-network.ts), so containerd (in the node namespace)
 * and podman (here) both reach it and nothing outside the machine does. Its storage is kept in the cache
 * across runs: an image pushed once is there for the next cluster.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import type { ChildProcessGroup } from '../../host/child-process-group.js';
import { ControlPlaneError } from '../../host/errors.js';
import { REGISTRY_HOST } from './node-config.js';
import { cacheRoot } from '../../host/paths.js';
import type { RunningProcesses } from '../processes.js';
import { waitUntilReady } from '../readiness.js';

export function registryStorageDir(): string {
  return join(cacheRoot(), 'registry');
}

export function registryConfig(storageDir: string, addr: string = REGISTRY_HOST): string {
  return `${JSON.stringify(
    {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: storageDir }, delete: { enabled: true } },
      http: { addr },
    },
    null,
    2,
  )}\n`;
}

/** GET http://REGISTRY_HOST/v2/<path>: the status code, 0 when nothing answers. */
export function registryStatus(path: string, method = 'GET'): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      `http://${REGISTRY_HOST}/v2/${path}`,
      {
        method,
        timeout: 2_000,
        headers: { Accept: 'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(0));
    req.end();
  });
}

export async function startRegistry(
  run: RunningProcesses,
  bin: string,
  dir: string,
  logDir: string,
): Promise<ChildProcessGroup> {
  const storage = registryStorageDir();
  await mkdir(storage, { recursive: true });
  const config = join(dir, 'registry.json');
  await writeFile(config, registryConfig(storage));
  // Its OpenTelemetry exporter would otherwise dial localhost:4318 for every request.
  const env = { ...process.env, OTEL_TRACES_EXPORTER: 'none' };
  const logFile = join(logDir, 'registry.log');
  const proc = await run.start('registry', bin, ['serve', config], logFile, { env });
  const ready = await waitUntilReady(
    proc,
    async () => ((await registryStatus('')) === 200 ? true : 'GET /v2/ does not answer 200 yet'),
    30_000,
  );
  if (!ready.ready) throw new ControlPlaneError(`the local registry did not start: ${ready.why}`, logFile);
  return proc;
}
