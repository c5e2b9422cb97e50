/**
 * The model-server images of dev/models/model-server-image.ts, each run by podman on the host network with only
 * Vertex's AIP_* variables (as the operator sets them for a containerSpec) and called on its predict route on
 * loopback: the image itself, not a pod. The answers must equal scikit-learn's for the same instances.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureIrisModel, IRIS_INSTANCES, irisPredictions } from '../../../dev/models/iris-model.js';
import { distinctFreePorts } from '../../../dev/cluster/ports.js';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import {
  ensureModelServerImage,
  MODEL_SERVER_IMAGE_CONTRACT,
  type ModelServerImageKind,
} from '../../../dev/models/model-server-image.js';
import { imageSize, megabytes, podman, podmanOk, PODMAN_ULIMITS } from '../../../dev/image/podman.js';

const containers: string[] = [];

/** What each image's server imports to start: Google's ModelServer and predictor, MLServer and its sklearn runtime. */
const SERVER_MODULES: Record<ModelServerImageKind, readonly string[]> = {
  'vertex-sklearn': [
    'google.cloud.aiplatform.prediction.model_server',
    'google.cloud.aiplatform.prediction.sklearn.predictor',
  ],
  mlserver: ['mlserver.cli.main', 'mlserver_sklearn'],
};

/**
 * Each image's size (uncompressed, as podman reports it) at most what it was brought down to, with a little to
 * spare: issue 50 aims at 300 MB, which Google's server does not fit (docs/container-image.md says why), so this
 * holds what was reached and fails a change that grows the image.
 */
const MAX_SIZE_MB: Record<ModelServerImageKind, number> = { 'vertex-sklearn': 495, mlserver: 410 };

afterAll(async () => {
  for (const name of containers) await podman(['rm', '--force', '--time', '0', name]);
});

async function logTail(name: string): Promise<string> {
  const r = await podman(['logs', name]);
  return `${r.stdout}${r.stderr}`.trimEnd().split('\n').slice(-30).join('\n');
}

/** Polls `url` until 200, failing with the container's last log lines when it exits or time runs out. */
async function waitReady(name: string, url: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return (Date.now() - started) / 1000;
    const state = await podman(['inspect', '--format', '{{.State.Running}}', name]);
    if (state.stdout.trim() !== 'true') throw new Error(`${name} exited before it was ready:\n${await logTail(name)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${name} not ready at ${url} within ${timeoutMs} ms:\n${await logTail(name)}`);
}

async function expected(kind: ModelServerImageKind): Promise<number[]> {
  const py = await ensurePythonPackages(kind === 'mlserver' ? 'mlserver' : 'vertex-model-server');
  return irisPredictions(py, await ensureIrisModel(py), IRIS_INSTANCES);
}

describe.each(['vertex-sklearn', 'mlserver'] as const)('the %s model-server image', (kind) => {
  it('serves the baked-in iris model on AIP_HTTP_PORT and answers what scikit-learn computes', async () => {
    const image = await ensureModelServerImage(kind);
    const size = await imageSize(image);
    expect(size / 1e6, `${image} is ${megabytes(size)}`).toBeLessThanOrEqual(MAX_SIZE_MB[kind]);
    const [http, grpc, metrics] = await distinctFreePorts(3);
    const routes = MODEL_SERVER_IMAGE_CONTRACT.routes[kind];
    const name = `eo-model-server-${kind}-${randomBytes(3).toString('hex')}`;
    containers.push(name);
    await podmanOk([
      'run',
      ...PODMAN_ULIMITS,
      '--detach',
      '--name',
      name,
      '--pull',
      'never',
      '--network',
      'host',
      '--env',
      `AIP_HTTP_PORT=${String(http)}`,
      '--env',
      `AIP_HEALTH_ROUTE=${routes.health}`,
      '--env',
      `AIP_PREDICT_ROUTE=${routes.predict}`,
      '--env',
      `AIP_STORAGE_URI=${MODEL_SERVER_IMAGE_CONTRACT.modelDir}`,
      // The host network: MLServer's other two ports must be free here too.
      '--env',
      `MLSERVER_GRPC_PORT=${String(grpc)}`,
      '--env',
      `MLSERVER_METRICS_PORT=${String(metrics)}`,
      image,
    ]);
    const base = `http://127.0.0.1:${String(http)}`;
    await waitReady(name, `${base}${routes.health}`);
    const body =
      kind === 'mlserver'
        ? { inputs: [{ name: 'x', shape: [IRIS_INSTANCES.length, 4], datatype: 'FP64', data: IRIS_INSTANCES.flat() }] }
        : { instances: IRIS_INSTANCES };
    const res = await fetch(`${base}${routes.predict}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { predictions?: unknown; outputs?: Array<{ data: unknown }> };
    expect(res.status, JSON.stringify(answer)).toBe(200);
    const want = await expected(kind);
    expect(new Set(want).size).toBeGreaterThan(1);
    if (kind === 'mlserver') expect(answer.outputs?.[0]?.data).toEqual(want);
    else expect(answer.predictions).toEqual(want);
  }, 1_800_000);

  // A stale .pyc is compiled again at every start (uid 65532 on a read-only root cannot rewrite it): with
  // pip's timestamp-checked bytecode, 822 of the Vertex server's modules were (dev/models/python-image-tree.ts).
  it('imports its server from the bytecode built into the image, none compiled at start', async () => {
    const image = await ensureModelServerImage(kind);
    const r = await podman([
      'run',
      ...PODMAN_ULIMITS,
      '--rm',
      '--pull',
      'never',
      '--network',
      'none',
      '--read-only',
      image,
      'python3',
      '-s',
      '-v',
      '-c',
      `import ${SERVER_MODULES[kind].join(', ')}`,
    ]);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const lines = r.stderr.split('\n');
    const fromBytecode = lines.filter((l) => l.startsWith('# code object from ')).length;
    const compiled = lines.filter((l) => /^# (bytecode is stale|could not create|code object from .*\.py'?$)/.test(l));
    expect(compiled, compiled.slice(0, 5).join('\n')).toEqual([]);
    expect(fromBytecode).toBeGreaterThan(500);
  }, 1_800_000);
});
