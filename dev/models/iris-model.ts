/**
 * The scikit-learn model the real model servers serve: a classifier trained by tools/python/iris/train.py on the
 * iris set scikit-learn ships, written as `model.joblib` (Vertex's SklearnPredictor, KServe, MLServer) beside
 * MLServer's `model-settings.json`, and cached at `<cache>/models/iris-<digest of the script and scikit-learn's pin>/`.
 * Every requirement set pins one scikit-learn version (a unit test holds them equal), so the model trained with
 * one set's interpreter loads in every server.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ControlPlaneError } from '../host/errors.js';
import { capture } from '../host/exec.js';
import { acquireFileLock } from '../host/file-lock.js';
import { cacheRoot, packageRoot } from '../host/paths.js';
import { pinnedRequirements, pythonRequirementsDir, type PythonPackages } from './python-packages.js';

/** The model's name in MLServer's model-settings.json. */
export const IRIS_MODEL_NAME = 'iris';

function irisScript(name: 'train.py' | 'predict.py'): string {
  return join(packageRoot(), 'tools', 'python', 'iris', name);
}

/** The `scikit-learn==x.y.z` pin of a set's requirements.txt. */
export async function scikitLearnPin(py: Pick<PythonPackages, 'set'>): Promise<string> {
  const text = await readFile(join(pythonRequirementsDir(py.set), 'requirements.txt'), 'utf8');
  const pin = pinnedRequirements(text).find((p) => p.toLowerCase().startsWith('scikit-learn=='));
  if (pin === undefined) throw new ControlPlaneError(`tools/python/${py.set} pins no scikit-learn: it cannot train`);
  return pin;
}

/** The directory holding model.joblib and model-settings.json, trained first when the cache has none. */
export async function ensureIrisModel(py: PythonPackages): Promise<string> {
  const pin = await scikitLearnPin(py);
  const digest = createHash('sha256')
    .update(await readFile(irisScript('train.py')))
    .update(pin)
    .digest('hex')
    .slice(0, 12);
  const dir = join(cacheRoot(), 'models', `iris-${digest}`);
  const complete = async (): Promise<boolean> =>
    (await stat(join(dir, 'model.joblib')).catch(() => undefined)) !== undefined &&
    (await stat(join(dir, 'model-settings.json')).catch(() => undefined)) !== undefined;
  if (await complete()) return dir;
  await mkdir(join(cacheRoot(), 'models'), { recursive: true });
  const lock = await acquireFileLock(join(cacheRoot(), 'models', 'iris.lock'));
  try {
    if (await complete()) return dir;
    const work = `${dir}.partial-${process.pid}`;
    await rm(work, { recursive: true, force: true });
    const r = await capture(py.python, [...py.pythonArgs, irisScript('train.py'), work], py.env());
    if (r.code !== 0) throw new ControlPlaneError(`training the iris model failed: ${r.stderr.trim().slice(-2000)}`);
    await rm(dir, { recursive: true, force: true });
    await rename(work, dir);
    return dir;
  } finally {
    await lock.release();
  }
}

/**
 * Flowers to ask the iris model about: a row of each class and three points between classes (the last three lie
 * near a decision boundary, where a server that mangled the numbers would answer differently).
 */
export const IRIS_INSTANCES: readonly (readonly number[])[] = [
  [5.1, 3.5, 1.4, 0.2],
  [6.2, 2.9, 4.3, 1.3],
  [7.7, 3.0, 6.1, 2.3],
  [5.9, 3.0, 5.1, 1.8],
  [4.9, 2.4, 3.3, 1.0],
  [6.0, 2.2, 5.0, 1.5],
];

/** scikit-learn's own predictions of the model in `modelDir` for `instances` (what every server must answer). */
export async function irisPredictions(
  py: PythonPackages,
  modelDir: string,
  instances: readonly (readonly number[])[],
): Promise<number[]> {
  const r = await capture(
    py.python,
    [...py.pythonArgs, irisScript('predict.py'), modelDir, JSON.stringify(instances)],
    py.env(),
  );
  if (r.code !== 0)
    throw new ControlPlaneError(`predicting with the iris model failed: ${r.stderr.trim().slice(-2000)}`);
  return JSON.parse(r.stdout) as number[];
}
