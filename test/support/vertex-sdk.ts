/**
 * The official Vertex AI Python SDK (google-cloud-aiplatform, the `aiplatform-sdk` requirement set) driven through
 * test/support/python/vertex_sdk_client.py against a gateway on localhost: its scenario's answer, the script's
 * last line of JSON. The gateway's CA is trusted as users trust it (gRPC's roots file, requests' bundle).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PythonPackages } from '../../dev/models/python-packages.js';
import { REPO_ROOT } from './examples.js';

const SCRIPT = join(REPO_ROOT, 'test', 'support', 'python', 'vertex_sdk_client.py');

export async function runVertexSdk<T = Record<string, unknown>>(
  py: PythonPackages,
  gateway: { readonly port: number; readonly caFile: string },
  args: readonly string[],
): Promise<T> {
  const { stdout } = await promisify(execFile)(py.python, [...py.pythonArgs, SCRIPT, ...args], {
    env: py.env({
      GATEWAY_API_ENDPOINT: `localhost:${gateway.port}`,
      GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: gateway.caFile,
      REQUESTS_CA_BUNDLE: gateway.caFile,
      // Explicit credentials are given; nothing may look for Google's metadata server (its address: a closed port).
      METADATA_SERVER_DETECTION: 'none',
      GCE_METADATA_HOST: '127.0.0.1:1',
      GCE_METADATA_IP: '127.0.0.1:1',
      NO_GCE_CHECK: 'True',
    }),
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as T;
}
