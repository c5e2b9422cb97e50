/**
 * The official Vertex AI Python SDK (google-cloud-aiplatform, the `aiplatform-sdk` requirement set) driven through
 * one of test/support/python's scripts against a gateway on localhost: vertex_sdk_client.py's read and predict
 * scenarios by default, vertex_sdk_notebook.py's write flow (one notebook cell a run). Its answer is the script's
 * last line of JSON. The gateway's CA is trusted as users trust it (gRPC's roots file, requests' bundle); `token`
 * is the caller's bearer token (GATEWAY_TOKEN), for gateways that authenticate.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PythonPackages } from '../../dev/models/python-packages.js';
import { REPO_ROOT } from './examples.js';

export type VertexSdkScript = 'vertex_sdk_client.py' | 'vertex_sdk_notebook.py';

export interface VertexSdkOptions {
  readonly script?: VertexSdkScript;
  readonly token?: string;
  /** How long the run may take (the SDK's wait for a real rollout included); 300 s by default. */
  readonly timeoutMs?: number;
}

export async function runVertexSdk<T = Record<string, unknown>>(
  py: PythonPackages,
  gateway: { readonly port: number; readonly caFile: string },
  args: readonly string[],
  opts: VertexSdkOptions = {},
): Promise<T> {
  const script = join(REPO_ROOT, 'test', 'support', 'python', opts.script ?? 'vertex_sdk_client.py');
  const { stdout } = await promisify(execFile)(py.python, [...py.pythonArgs, script, ...args], {
    env: py.env({
      GATEWAY_API_ENDPOINT: `localhost:${gateway.port}`,
      GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: gateway.caFile,
      REQUESTS_CA_BUNDLE: gateway.caFile,
      // Explicit credentials are given; nothing may look for Google's metadata server (its address: a closed port).
      METADATA_SERVER_DETECTION: 'none',
      GCE_METADATA_HOST: '127.0.0.1:1',
      GCE_METADATA_IP: '127.0.0.1:1',
      NO_GCE_CHECK: 'True',
      ...(opts.token !== undefined ? { GATEWAY_TOKEN: opts.token } : {}),
    }),
    timeout: opts.timeoutMs ?? 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as T;
}
