/**
 * Demo model servers: the fraud model (fraud-model.ts) served over KServe V1 or the Open Inference
 * Protocol V2, on a port of `host` or on a listening socket handed in (one opened in the local cluster's
 * model host, dev/cluster/model-host.ts). `dev` starts them and points the examples' DeployedModels at them;
 * the gateway's integration tests and benchmark call them through the gateway and directly.
 */
import http from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import type { BackendProtocol } from '../../../src/api/prediction/v1/backend.js';
import { FRAUD_MODEL_VERSIONS } from './fraud-model.js';
import { kserveV1Handler } from './kserve-v1-server.js';
import { openInferenceV2Handler } from './open-inference-v2-server.js';

export { FEATURES, FRAUD_MODEL_VERSIONS, explain, fraudProbability, predict, toPayment } from './fraud-model.js';

export interface DemoModelServerOptions {
  readonly protocol: BackendProtocol;
  /** The model's name on the server (the backend's modelName). */
  readonly modelName: string;
  readonly version: 'v1' | 'v2';
  /** Where it listens (default 127.0.0.1); with `socket`, only the address its URL names. */
  readonly host?: string;
  /** 0 = any free port. */
  readonly port?: number;
  /** A socket already listening (in a model host): served as it is, `port` is ignored. */
  readonly socket?: Server;
}

export interface RunningDemoModelServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export async function startDemoModelServer(options: DemoModelServerOptions): Promise<RunningDemoModelServer> {
  const model = FRAUD_MODEL_VERSIONS[options.version];
  const handler =
    options.protocol === 'KServeV1'
      ? kserveV1Handler(options.modelName, model)
      : openInferenceV2Handler(options.modelName, model);
  const server = http.createServer({ keepAliveTimeout: 65_000 }, handler);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (options.socket !== undefined) server.listen(options.socket, listening);
    else server.listen(options.port ?? 0, host, listening);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
