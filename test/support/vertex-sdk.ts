/**
 * The official Vertex AI Python SDK (google-cloud-aiplatform, the `aiplatform-sdk` requirement set) against a gateway
 * on localhost, driven through test/support/python's scripts: vertex_sdk_client.py's read and predict scenarios (one
 * run each, its answer the script's last line of JSON), and vertex_sdk_notebook.py, a notebook kernel that keeps the
 * SDK loaded and runs the write flow one cell at a time. The gateway's CA is trusted as users trust it (gRPC's roots
 * file, requests' bundle); `token` is the caller's bearer token (GATEWAY_TOKEN), for gateways that authenticate.
 */
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { PythonPackages } from '../../dev/models/python-packages.js';
import { REPO_ROOT } from './examples.js';

export interface SdkGateway {
  readonly port: number;
  readonly caFile: string;
}

export interface VertexSdkOptions {
  readonly token?: string;
  /** How long the run may take; 300 s by default. */
  readonly timeoutMs?: number;
}

function script(name: 'vertex_sdk_client.py' | 'vertex_sdk_notebook.py'): string {
  return join(REPO_ROOT, 'test', 'support', 'python', name);
}

function sdkEnv(py: PythonPackages, gateway: SdkGateway, token: string | undefined): NodeJS.ProcessEnv {
  return py.env({
    GATEWAY_API_ENDPOINT: `localhost:${gateway.port}`,
    GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: gateway.caFile,
    REQUESTS_CA_BUNDLE: gateway.caFile,
    // Explicit credentials are given; nothing may look for Google's metadata server (its address: a closed port).
    METADATA_SERVER_DETECTION: 'none',
    GCE_METADATA_HOST: '127.0.0.1:1',
    GCE_METADATA_IP: '127.0.0.1:1',
    NO_GCE_CHECK: 'True',
    ...(token !== undefined ? { GATEWAY_TOKEN: token } : {}),
  });
}

/** One run of vertex_sdk_client.py with `args` (its scenario first): its last line of JSON. */
export async function runVertexSdk<T = Record<string, unknown>>(
  py: PythonPackages,
  gateway: SdkGateway,
  args: readonly string[],
  opts: VertexSdkOptions = {},
): Promise<T> {
  const { stdout } = await promisify(execFile)(py.python, [...py.pythonArgs, script('vertex_sdk_client.py'), ...args], {
    env: sdkEnv(py, gateway, opts.token),
    timeout: opts.timeoutMs ?? 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as T;
}

/** A running notebook kernel (vertex_sdk_notebook.py) of one caller. */
export interface NotebookKernel {
  /** Runs one cell: the step's JSON answer (or its error: {error, code, message}). One cell at a time. */
  run(step: string, args: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>>;
  /** Ends the kernel (its stdin closed, then SIGKILL if it lingers). */
  close(): Promise<void>;
}

/** vertex_sdk_notebook.py's prefix of a cell's answer line. */
const RESULT_PREFIX = 'notebook-cell-result ';

export function startNotebookKernel(py: PythonPackages, gateway: SdkGateway, token: string): NotebookKernel {
  const child = spawn(py.python, [...py.pythonArgs, script('vertex_sdk_notebook.py')], {
    env: sdkEnv(py, gateway, token),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (line: string): void => {
    output.push(line);
    if (output.length > 200) output.shift();
  };
  /** The cell waiting for its answer: settled by its answer line, the kernel's exit, or its timeout. */
  let waiting: { readonly answer: (line: string) => void; readonly fail: (why: string) => void } | undefined;
  let exited: string | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith(RESULT_PREFIX)) waiting?.answer(line.slice(RESULT_PREFIX.length));
    else keep(line);
  });
  createInterface({ input: child.stderr }).on('line', keep);
  const ended = new Promise<void>((resolve) =>
    child.once('close', (code, signal) => {
      exited = `the notebook kernel exited (${signal ?? `code ${code}`})`;
      waiting?.fail(exited);
      resolve();
    }),
  );
  return {
    run: (step, args, timeoutMs) =>
      new Promise((resolve, reject) => {
        if (waiting !== undefined) throw new Error('a notebook kernel runs one cell at a time');
        if (exited !== undefined) throw new Error(exited);
        const timer = setTimeout(() => {
          // A cell that ran past its time may still answer later: no later cell may read that answer.
          child.kill('SIGKILL');
          waiting?.fail(`the cell ${step} ran past ${timeoutMs} ms`);
        }, timeoutMs);
        const settled = (): void => {
          clearTimeout(timer);
          waiting = undefined;
        };
        waiting = {
          answer: (line) => {
            settled();
            resolve(JSON.parse(line) as Record<string, unknown>);
          },
          fail: (why) => {
            settled();
            reject(new Error(`${why}; its last output:\n${output.slice(-40).join('\n')}`));
          },
        };
        child.stdin.write(`${JSON.stringify({ step, args })}\n`);
      }),
    close: async () => {
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await ended;
      clearTimeout(killer);
    },
  };
}
