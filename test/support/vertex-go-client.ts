/**
 * Google's official Go clients against the gateway: `tools/vertex-go-client`, a small program on
 * cloud.google.com/go/aiplatform/apiv1 (PredictionClient.Predict, EndpointClient.GetEndpoint over gRPC with
 * TLS), built from the Go module proxy on first use and cached like the cluster's binaries
 * (dev/cluster/go-build.ts). It is given the gateway's address, its CA and a bearer token, and nothing
 * else: the metadata server is switched off and pointed at a closed port, so it never probes one.
 */
import { spawn } from 'node:child_process';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';

/** The aiplatform release tools/vertex-go-client/go.mod requires. */
export const VERTEX_GO_CLIENT: GoModuleBuild = {
  module: 'vertex-go-client',
  version: 'aiplatform-v1.127.1',
  binaries: ['vertex-go-client'],
};

export type VertexGoCall =
  | {
      readonly method: 'Predict';
      /** `projects/{p}/locations/{l}/endpoints/{e}`. */
      readonly endpoint: string;
      readonly instances: readonly unknown[];
      readonly parameters?: unknown;
    }
  | { readonly method: 'GetEndpoint'; readonly name: string };

export interface VertexGoRequest {
  /** `host:port` of the gateway's TLS port (a name or address its certificate covers). */
  readonly address: string;
  readonly caFile: string;
  /** The bearer token (a ServiceAccount token for the gateway's audience). */
  readonly token: string;
  /** Deadline of each call, sent as grpc-timeout; default 30 s. */
  readonly timeoutSeconds?: number;
  readonly calls: readonly VertexGoCall[];
}

/** One call's outcome: the response as protojson (REST field names), or the gRPC status. */
export interface VertexGoAnswer {
  readonly method: VertexGoCall['method'];
  readonly response?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly details?: unknown[] };
}

const TOKEN_ENV = 'GATEWAY_TOKEN';

/** Builds the program when not cached (minutes, once), runs the calls in one process and returns their outcomes in order. */
export async function runVertexGoClient(request: VertexGoRequest): Promise<VertexGoAnswer[]> {
  const binary = (await ensureGoBuild(VERTEX_GO_CLIENT))['vertex-go-client'] ?? 'vertex-go-client';
  const { token, ...rest } = request;
  const input = JSON.stringify({ ...rest, tokenEnv: TOKEN_ENV });
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        [TOKEN_ENV]: token,
        // No credentials but the token given; never the metadata server (a closed port if anything asks).
        METADATA_SERVER_DETECTION: 'none',
        GCE_METADATA_HOST: '127.0.0.1:1',
        GOOGLE_APPLICATION_CREDENTIALS: '',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(stdout) as VertexGoAnswer[])
        : reject(new Error(`vertex-go-client exited ${String(code)}: ${stderr.trim()}`)),
    );
    child.stdin.end(input);
  });
}
