/**
 * Real model servers from PyPI, each run as a process in the test cluster's model host (a network namespace whose
 * address EndpointSlices accept) and serving the iris model (dev/models/iris-model.ts):
 *
 * - `mlserver`: Seldon's MLServer 1.7 with mlserver-sklearn, Open Inference Protocol V2 (`/v2/models/iris/infer`);
 * - `kserve`: KServe 0.21's ModelServer with a scikit-learn Model (tools/python/kserve/sklearn_server.py), V1
 *   (`/v1/models/iris:predict`) and V2 on one port;
 * - `vertex`: Google's ModelServer for Vertex custom containers with its SklearnPredictor, configured by the
 *   AIP_* variables as Vertex configures it (`AIP_PREDICT_ROUTE`, `AIP_HEALTH_ROUTE`, `AIP_STORAGE_URI`).
 *
 * A start waits (bounded) until the server says its model is ready; a failure names the server and quotes the
 * last lines of its log. stop() ends the server's whole process group (MLServer's inference workers too).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { ChildProcessGroup } from '../../dev/host/child-process-group.js';
import { ensureIrisModel, IRIS_MODEL_NAME } from '../../dev/models/iris-model.js';
import { listenInModelHost } from '../../dev/cluster/model-host.js';
import { distinctFreePorts, isPortConflict } from '../../dev/cluster/ports.js';
import { inModelHost, type ModelHost } from '../../dev/cluster/network.js';
import { ensurePythonPackages, type PythonPackages } from '../../dev/models/python-packages.js';
import { waitUntilReady } from '../../dev/cluster/readiness.js';
import { REPO_ROOT } from './examples.js';

export type RealModelServerKind = 'mlserver' | 'kserve' | 'vertex';

export interface RealModelServer {
  readonly kind: RealModelServerKind;
  readonly address: string;
  readonly port: number;
  /** The served model's name (V1/V2 routes), and the directory it was loaded from. */
  readonly modelName: string;
  readonly modelDir: string;
  readonly python: PythonPackages;
  /** Seconds from spawn to the model's ready answer. */
  readonly startSeconds: number;
  /** The last `n` lines the server logged. */
  logTail(n?: number): Promise<string>;
  stop(): Promise<void>;
}

/** The Vertex server's routes, as a DeployedModel's containerSpec would set them. */
export const VERTEX_ROUTES = { predict: '/predict', health: '/health' } as const;

const PACKAGE_SET = { mlserver: 'mlserver', kserve: 'kserve', vertex: 'vertex-model-server' } as const;

/** The ports a server is given (the ones it has no use for are left alone). */
interface ServerPorts {
  readonly http: number;
  readonly grpc: number;
  readonly metrics: number;
}

/** A port free in the model host a moment ago (the server binds it then; see startRealModelServer). */
async function freeModelHostPort(host: ModelHost): Promise<number> {
  const socket = await listenInModelHost(host, 0);
  const { port } = socket.address() as AddressInfo;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** The most starts of one server: a start whose port another socket took first is followed by one on new ports. */
const STARTS_ON_TAKEN_PORTS = 3;

async function tail(file: string, n: number): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

interface Launch {
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** The path that answers 200 once the model is loaded. */
  readonly readyPath: string;
}

function launch(kind: RealModelServerKind, host: ModelHost, ports: ServerPorts, modelDir: string): Launch {
  switch (kind) {
    case 'mlserver':
      return {
        args: [
          '-c',
          'import sys; from mlserver.cli.main import main; sys.argv[0] = "mlserver"; main()',
          'start',
          modelDir,
        ],
        env: {
          MLSERVER_HOST: host.address,
          MLSERVER_HTTP_PORT: String(ports.http),
          MLSERVER_GRPC_PORT: String(ports.grpc),
          MLSERVER_METRICS_PORT: String(ports.metrics),
        },
        readyPath: `/v2/models/${IRIS_MODEL_NAME}/ready`,
      };
    case 'kserve':
      return {
        args: [
          join(REPO_ROOT, 'tools/python/kserve/sklearn_server.py'),
          '--model_dir',
          modelDir,
          '--model_name',
          IRIS_MODEL_NAME,
          '--http_port',
          String(ports.http),
          '--grpc_port',
          String(ports.grpc),
        ],
        env: {},
        readyPath: `/v1/models/${IRIS_MODEL_NAME}`,
      };
    case 'vertex':
      return {
        args: ['-m', 'google.cloud.aiplatform.prediction.model_server'],
        env: {
          AIP_HTTP_PORT: String(ports.http),
          AIP_PREDICT_ROUTE: VERTEX_ROUTES.predict,
          AIP_HEALTH_ROUTE: VERTEX_ROUTES.health,
          // Not gs://: Google's download_model_artifacts copies a local directory to the working directory.
          AIP_STORAGE_URI: modelDir,
          HANDLER_MODULE: 'google.cloud.aiplatform.prediction.handler',
          HANDLER_CLASS: 'PredictionHandler',
          PREDICTOR_MODULE: 'google.cloud.aiplatform.prediction.sklearn.predictor',
          PREDICTOR_CLASS: 'SklearnPredictor',
          // One Uvicorn process. With more (the default is one per core), Uvicorn's supervisor kills each worker
          // that has not answered its health check within 5 s, and on a busy machine importing the SDK takes longer.
          VERTEX_CPR_WEB_CONCURRENCY: '1',
        },
        readyPath: VERTEX_ROUTES.health,
      };
  }
}

/**
 * Installs (cached) the server's Python set, trains (cached) the iris model, and starts the server in the model
 * host; resolves once its model is ready, or throws naming the server and its last log lines after `timeoutMs`.
 */
export async function startRealModelServer(
  kind: RealModelServerKind,
  host: ModelHost,
  opts: StartOptions = {},
): Promise<RealModelServer> {
  const python = await ensurePythonPackages(PACKAGE_SET[kind], opts.log);
  const modelDir = await ensureIrisModel(python);
  for (let attempt = 1; ; attempt++) {
    const ports = await distinctFreePorts(3, () => freeModelHostPort(host));
    const [http, grpc, metrics] = ports as [number, number, number];
    const started = await startOnce(kind, host, python, modelDir, { http, grpc, metrics }, opts);
    if ('port' in started) return started;
    if (attempt === STARTS_ON_TAKEN_PORTS || !started.portTaken)
      throw new Error(
        `the ${kind} model server did not get ready: ${started.why}\nits last log lines:\n${started.last}`,
      );
  }
}

interface StartOptions {
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
  readonly env?: Readonly<Record<string, string>>;
}

/** The server on these ports, or why it did not get ready and its last log lines. */
async function startOnce(
  kind: RealModelServerKind,
  host: ModelHost,
  python: PythonPackages,
  modelDir: string,
  ports: ServerPorts,
  opts: StartOptions,
): Promise<RealModelServer | { readonly why: string; readonly last: string; readonly portTaken: boolean }> {
  const { args, env, readyPath } = launch(kind, host, ports, modelDir);
  const work = await mkdtemp(join(tmpdir(), `eo-${kind}-`));
  const logFile = join(work, `${kind}.log`);
  // Run in the test's own directory (env --chdir): Vertex's ModelServer copies the model into its working directory.
  const [cmd, cmdArgs] = inModelHost(host, 'env', [`--chdir=${work}`, python.python, ...python.pythonArgs, ...args]);
  const started = Date.now();
  const child = await ChildProcessGroup.start(
    kind,
    cmd,
    cmdArgs,
    logFile,
    python.env({
      ...env,
      PYTHONUNBUFFERED: '1',
      // The Google libraries must never probe a metadata server (no traffic leaves the machine).
      METADATA_SERVER_DETECTION: 'none',
      GCE_METADATA_HOST: '127.0.0.1:1',
      GCE_METADATA_IP: '127.0.0.1:1',
      NO_GCE_CHECK: 'True',
      ...opts.env,
    }),
  );
  const url = `http://${host.address}:${ports.http}${readyPath}`;
  const portTaken = async (): Promise<boolean> => isPortConflict(await readFile(logFile, 'utf8').catch(() => ''));
  const outcome = await waitUntilReady(
    child,
    async () => {
      // A server that lost a port may keep running without it (MLServer can), and another may answer on it: its log says so.
      if (await portTaken()) {
        await child.stop();
        return 'a port it was given was taken by another socket first';
      }
      const res = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
      const body = await res.body.text();
      return res.statusCode === 200 ? true : `${res.statusCode} ${body.slice(0, 200)}`;
    },
    opts.timeoutMs ?? 180_000,
  );
  if (!outcome.ready) {
    await child.stop();
    const [last, taken] = [await tail(logFile, 30), await portTaken()];
    await rm(work, { recursive: true, force: true });
    return { why: outcome.why, last, portTaken: taken };
  }
  return {
    kind,
    address: host.address,
    port: ports.http,
    modelName: IRIS_MODEL_NAME,
    modelDir,
    python,
    startSeconds: (Date.now() - started) / 1000,
    logTail: (n = 30) => tail(logFile, n),
    stop: async () => {
      await child.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}
