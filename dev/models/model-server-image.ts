/**
 * Images of real model servers for a DeployedModel's `containerSpec`, built with podman on the Python base
 * (dev/image/python-base.ts: Debian bookworm's python3, 3.11 like the machines', without Node.js): the hashed
 * requirement set installed on this machine (dev/models/python-packages.ts, a relocatable `--target` directory)
 * copied to /opt/python less its test suites, with stripped shared objects and unchecked bytecode
 * (dev/models/python-image-tree.ts), and the iris model (dev/models/iris-model.ts) baked in at /models/iris.
 * docs/models.md says what an image holds, part by part.
 *
 * The container contract is Vertex's custom-container one: it reads AIP_HTTP_PORT (default 8080),
 * AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE and AIP_STORAGE_URI (default /models/iris; a DeployedModel passes it as
 * `artifactUri: /models/iris`, which the CRD accepts as any string; only local paths are served here, nothing
 * is fetched from a bucket).
 *
 * - `vertex-sklearn`: Google's ModelServer (google-cloud-aiplatform[prediction]) with its SklearnPredictor, which
 *   reads the AIP_* variables itself and copies AIP_STORAGE_URI's files into its working directory
 *   (/srv/model); speaks the `Vertex` protocol on AIP_PREDICT_ROUTE, health on AIP_HEALTH_ROUTE.
 * - `mlserver`: MLServer 1.7 with mlserver-sklearn behind a small entrypoint that maps AIP_HTTP_PORT to
 *   MLSERVER_HTTP_PORT and serves the model directory AIP_STORAGE_URI names (its model-settings.json names the
 *   model `iris`); speaks `OpenInferenceV2` (`/v2/models/iris/infer`), health on `/v2/health/ready`: give
 *   the containerSpec `healthRoute: /v2/health/ready`. Its gRPC (8081) and metrics (8082) ports are MLServer's
 *   defaults (MLSERVER_GRPC_PORT, MLSERVER_METRICS_PORT move them).
 *
 * Both run as uid 65532 and write only below /srv (Vertex's server copies the model there): a read-only root
 * filesystem needs an emptyDir at /srv/model.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureIrisModel, IRIS_MODEL_NAME } from './iris-model.js';
import { runLogged } from '../host/exec.js';
import { acquireFileLock } from '../host/file-lock.js';
import { cacheRoot } from '../host/paths.js';
import { ensurePythonPackages, pythonRequirementsDir } from './python-packages.js';
import { ensurePodman, imageExists, imageLogDir, podmanOk } from '../image/podman.js';
import { ensurePythonBase } from '../image/python-base.js';
import { IMAGE_PYTHON_DIR, PYTHON_IMAGE_TREE_LAYOUT, slimPythonTree } from './python-image-tree.js';

export type ModelServerImageKind = 'vertex-sklearn' | 'mlserver';

export const MODEL_SERVER_IMAGE_REPOSITORY = 'localhost/endpoint-operator-model-server';

/** Where the image keeps things, and what it listens on by default. */
export const MODEL_SERVER_IMAGE_CONTRACT = {
  port: 8080,
  modelDir: `/models/${IRIS_MODEL_NAME}`,
  modelName: IRIS_MODEL_NAME,
  user: 65532,
  routes: {
    'vertex-sklearn': { predict: '/predict', health: '/health' },
    mlserver: { predict: `/v2/models/${IRIS_MODEL_NAME}/infer`, health: '/v2/health/ready' },
  },
} as const;

const SET = { 'vertex-sklearn': 'vertex-model-server', mlserver: 'mlserver' } as const;

/** MLServer's entrypoint: Vertex's variables to MLServer's settings. */
const MLSERVER_ENTRYPOINT = `#!/bin/sh
# Vertex's custom-container variables mapped to MLServer's settings.
set -eu
export MLSERVER_HTTP_PORT="\${AIP_HTTP_PORT:-${MODEL_SERVER_IMAGE_CONTRACT.port}}"
export MLSERVER_HOST="\${MLSERVER_HOST:-0.0.0.0}"
model_dir="\${AIP_STORAGE_URI:-${MODEL_SERVER_IMAGE_CONTRACT.modelDir}}"
case "$model_dir" in
  /*) ;;
  *) echo "AIP_STORAGE_URI must be a directory in the image (e.g. ${MODEL_SERVER_IMAGE_CONTRACT.modelDir}), not $model_dir" >&2; exit 2 ;;
esac
exec python3 -s -c 'import sys; from mlserver.cli.main import main; sys.argv[0] = "mlserver"; main()' start "$model_dir"
`;

function dockerfile(kind: ModelServerImageKind): string {
  const c = MODEL_SERVER_IMAGE_CONTRACT;
  const common = [
    'ARG BASE',
    'FROM ${BASE}',
    `COPY python ${IMAGE_PYTHON_DIR}`,
    `COPY model ${c.modelDir}`,
    // An empty directory of the context: the base has no mkdir or chown to RUN (dev/image/python-base.ts).
    `COPY --chown=${c.user}:${c.user} srv-model /srv/model`,
    'WORKDIR /srv/model',
    `ENV PYTHONPATH=${IMAGE_PYTHON_DIR} PYTHONUNBUFFERED=1 AIP_HTTP_PORT=${c.port} AIP_STORAGE_URI=${c.modelDir}`,
    `USER ${c.user}:${c.user}`,
    `EXPOSE ${c.port}`,
  ];
  if (kind === 'mlserver')
    return [
      ...common,
      'COPY entrypoint.sh /usr/local/bin/mlserver-entrypoint',
      'CMD ["/usr/local/bin/mlserver-entrypoint"]',
      '',
    ].join('\n');
  const r = c.routes['vertex-sklearn'];
  return [
    ...common,
    `ENV AIP_HEALTH_ROUTE=${r.health} AIP_PREDICT_ROUTE=${r.predict} ` +
      'HANDLER_MODULE=google.cloud.aiplatform.prediction.handler HANDLER_CLASS=PredictionHandler ' +
      'PREDICTOR_MODULE=google.cloud.aiplatform.prediction.sklearn.predictor PREDICTOR_CLASS=SklearnPredictor ' +
      // One Uvicorn process: with more, its supervisor kills a worker that is slow to import the SDK.
      'VERTEX_CPR_WEB_CONCURRENCY=1',
    'CMD ["python3", "-s", "-m", "google.cloud.aiplatform.prediction.model_server"]',
    '',
  ].join('\n');
}

/** The image's tag: a digest of everything that goes into it. */
async function imageTag(
  kind: ModelServerImageKind,
  base: string,
  pythonDir: string,
  modelDir: string,
): Promise<string> {
  const hash = createHash('sha256')
    .update(dockerfile(kind))
    .update(PYTHON_IMAGE_TREE_LAYOUT)
    .update(MLSERVER_ENTRYPOINT)
    .update(base)
    .update(pythonDir)
    .update(modelDir)
    .update(await readFile(join(pythonRequirementsDir(SET[kind]), 'requirements.txt')));
  return `${MODEL_SERVER_IMAGE_REPOSITORY}-${kind}:${hash.digest('hex').slice(0, 12)}`;
}

/**
 * The local podman image of `kind` (its name), built when podman does not have it: installs the Python set and
 * trains the model first when their caches lack them.
 */
export async function ensureModelServerImage(
  kind: ModelServerImageKind,
  log: (line: string) => void = () => {},
): Promise<string> {
  const python = await ensurePythonPackages(SET[kind], log);
  const model = await ensureIrisModel(python);
  await mkdir(imageLogDir(), { recursive: true });
  const logFile = join(imageLogDir(), `model-server-image-${kind}.log`);
  // One builder at a time on a machine (as dev/image/build.ts): the builds share podman's storage.
  const lock = await acquireFileLock(join(cacheRoot(), 'image.lock'), {
    onWait: (pid) => log(`waiting for pid ${pid}, which is building an image`),
  });
  try {
    await ensurePodman(log, logFile);
    const base = await ensurePythonBase(log, logFile);
    const tag = await imageTag(kind, base, python.dir, model);
    if (await imageExists(tag)) return tag;
    await mkdir(join(cacheRoot(), 'image'), { recursive: true });
    const context = await mkdtemp(join(cacheRoot(), 'image', `context-${kind}-`));
    try {
      // Hard links: the package directory is hundreds of megabytes on the same file system.
      await copyTree(python.dir, join(context, 'python'), logFile);
      await slimPythonTree(python, join(context, 'python'), logFile);
      await cp(model, join(context, 'model'), { recursive: true });
      await mkdir(join(context, 'srv-model'));
      await writeFile(join(context, 'entrypoint.sh'), MLSERVER_ENTRYPOINT, { mode: 0o755 });
      await writeFile(join(context, 'Dockerfile'), dockerfile(kind));
      log(`podman build of ${tag} on ${base}`);
      const code = await runLogged(
        'podman',
        [
          'build',
          '--isolation',
          'chroot',
          '--network',
          'host',
          '--build-arg',
          `BASE=${base}`,
          '--tag',
          tag,
          '--file',
          join(context, 'Dockerfile'),
          context,
        ],
        { logFile },
      );
      if (code !== 0) throw new Error(`podman build of ${tag} failed (exit ${code}); see ${logFile}`);
      await podmanOk(['image', 'inspect', '--format', '{{.Id}}', tag]);
      return tag;
    } finally {
      await rm(context, { recursive: true, force: true });
    }
  } finally {
    await lock.release();
  }
}

async function copyTree(from: string, to: string, logFile: string): Promise<void> {
  if ((await runLogged('cp', ['-al', from, to], { logFile })) === 0) return;
  await rm(to, { recursive: true, force: true });
  await cp(from, to, { recursive: true });
}
