/**
 * Python packages from PyPI for the tests and images that drive real Python programs (Google's Vertex SDK and
 * model server, MLServer, KServe), installed from the committed requirement sets under `tools/python/<set>/`:
 * a `requirements.txt` that pins every package, dependencies included, with its hashes (tools/python/README.md
 * says how to regenerate one). Installed with `pip install --require-hashes --no-deps --target`, so nothing
 * unpinned or unhashed is ever fetched, into a cache outside the repository:
 * `<cache>/python/<set>-<digest of requirements.txt, the Python version and the platform>/`.
 *
 * The install is a `--target` directory, not a virtual environment: it is relocatable, so the same directory
 * is copied into the model-server images (dev/models/model-server-image.ts), whose Debian python3 is the same 3.11.
 * It runs with PYTHONPATH=<dir>, so the pinned packages come first on sys.path, and `-s` (no user site-packages);
 * not `-S`, which would also drop the `.pth` files some packages install.
 *
 * Used by:
 * ```ts
 * const py = await ensurePythonPackages('aiplatform-sdk', log);
 * spawn(py.python, [...py.pythonArgs, 'client_test.py'], { env: py.env({ METADATA_SERVER_DETECTION: 'none' }) });
 * ```
 * An install runs under a lock (two test runs install once), into `<dir>.partial-<pid>` renamed into place when
 * complete; a directory without its `.complete` record, or missing a package that record lists, is reinstalled.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ControlPlaneError } from '../host/errors.js';
import { capture, runLogged } from '../host/exec.js';
import { acquireFileLock, pidAlive } from '../host/file-lock.js';
import { cacheRoot, packageRoot } from '../host/paths.js';

/** The requirement sets under tools/python/. */
export const PYTHON_PACKAGE_SETS = ['aiplatform-sdk', 'vertex-model-server', 'mlserver', 'kserve'] as const;
export type PythonPackageSet = (typeof PYTHON_PACKAGE_SETS)[number];

export interface PythonPackages {
  readonly set: PythonPackageSet;
  /** The `--target` directory: the packages, importable with it on PYTHONPATH. */
  readonly dir: string;
  /** The interpreter the packages were installed for (python3 on PATH, or EO_PYTHON). */
  readonly python: string;
  /** The interpreter's arguments before a script or `-m`: `-s` (no user site-packages). */
  readonly pythonArgs: readonly string[];
  /** The environment to run it in: `base` (default process.env) with PYTHONPATH set to `dir`. */
  env(extra?: Readonly<Record<string, string>>, base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

interface CompleteRecord {
  readonly set: PythonPackageSet;
  readonly python: string;
  readonly installedAt: string;
  readonly installSeconds: number;
  /** The `*.dist-info` directories pip wrote, one per pinned package. */
  readonly distributions: readonly string[];
}

const COMPLETE = '.complete';

export function pythonRequirementsDir(set: PythonPackageSet): string {
  return join(packageRoot(), 'tools', 'python', set);
}

function pythonCommand(): string {
  const override = process.env['EO_PYTHON'];
  return override !== undefined && override !== '' ? override : 'python3';
}

/** "3.11.7 x86_64": the interpreter's version and machine, part of the cache key (wheels are built for both). */
export async function pythonVersion(python = pythonCommand()): Promise<string> {
  const r = await capture(python, [
    '-S',
    '-c',
    'import sys, platform; print(sys.version.split()[0], platform.machine())',
  ]);
  const version = r.stdout.trim();
  if (r.code !== 0 || !/^3\.\d+\.\d+ \S+$/.test(version))
    throw new ControlPlaneError(
      `the Python packages need Python 3.11 (python3 on PATH, or EO_PYTHON), but \`${python} -c ...\` failed: ${r.stderr.trim() || `exit ${r.code}`}`,
    );
  return version;
}

/** The number of pinned requirements (`name==version` lines) in a requirements.txt. Pure: unit-tested. */
export function pinnedRequirements(text: string): string[] {
  return [...text.matchAll(/^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)/gm)].map((m) => `${m[1]}==${m[2]}`);
}

/** The cache directory of `set` for this interpreter. */
export async function pythonPackagesDir(set: PythonPackageSet, python = pythonCommand()): Promise<string> {
  const requirements = await readFile(join(pythonRequirementsDir(set), 'requirements.txt')).catch(() => {
    throw new ControlPlaneError(`tools/python/${set}/requirements.txt is missing (see tools/python/README.md)`);
  });
  const digest = createHash('sha256')
    .update(requirements)
    .update(await pythonVersion(python))
    .digest('hex')
    .slice(0, 12);
  return join(cacheRoot(), 'python', `${set}-${digest}`);
}

/** True when the record is there and every distribution it lists is too (a half-deleted directory is not). */
export async function verified(dir: string, set: PythonPackageSet): Promise<boolean> {
  const text = await readFile(join(dir, COMPLETE), 'utf8').catch(() => '');
  let record: Partial<CompleteRecord> | undefined;
  try {
    record = JSON.parse(text) as Partial<CompleteRecord>;
  } catch {
    return false; // none, or torn
  }
  if (record?.set !== set || !Array.isArray(record.distributions) || record.distributions.length === 0) return false;
  for (const dist of record.distributions)
    if ((await stat(join(dir, dist, 'RECORD')).catch(() => undefined)) === undefined) return false;
  return true;
}

function handle(set: PythonPackageSet, dir: string, python: string): PythonPackages {
  return {
    set,
    dir,
    python,
    pythonArgs: ['-s'],
    env: (extra = {}, base = process.env) => ({ ...base, PYTHONPATH: dir, PYTHONNOUSERSITE: '1', ...extra }),
  };
}

/**
 * The packages of `set`, installed first when the cache has no verified copy. A failed install throws a
 * ControlPlaneError naming its log.
 */
export async function ensurePythonPackages(
  set: PythonPackageSet,
  log: (line: string) => void = () => {},
): Promise<PythonPackages> {
  const python = pythonCommand();
  const dir = await pythonPackagesDir(set, python);
  if (await verified(dir, set)) return handle(set, dir, python);

  await mkdir(join(cacheRoot(), 'logs'), { recursive: true });
  const lock = await acquireFileLock(join(cacheRoot(), `python-${set}.lock`), {
    onWait: (pid) => log(`waiting for another process (pid ${pid}) that is installing the Python set ${set}...`),
  });
  try {
    if (!(await verified(dir, set))) {
      await removeAbandonedInstalls(dir);
      await install(set, dir, python, log);
    }
    return handle(set, dir, python);
  } finally {
    await lock.release();
  }
}

/** Removes `<dir>.partial-<pid>` directories of installs whose process died. */
async function removeAbandonedInstalls(dir: string): Promise<void> {
  const prefix = `${basename(dir)}.partial-`;
  for (const name of await readdir(dirname(dir)).catch(() => [] as string[])) {
    if (name.startsWith(prefix) && !pidAlive(Number(name.slice(prefix.length))))
      await rm(join(dirname(dir), name), { recursive: true, force: true });
  }
}

async function install(set: PythonPackageSet, dir: string, python: string, log: (line: string) => void): Promise<void> {
  const requirements = join(pythonRequirementsDir(set), 'requirements.txt');
  const pinned = pinnedRequirements(await readFile(requirements, 'utf8'));
  const logFile = join(cacheRoot(), 'logs', `python-${set}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  const work = `${dir}.partial-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  log(
    `installing the Python set ${set} (${pinned.length} pinned packages) from PyPI; once per version, log: ${logFile}`,
  );
  const started = Date.now();
  const code = await runLogged(
    python,
    [
      '-m',
      'pip',
      'install',
      '--require-hashes',
      '--no-deps',
      '--disable-pip-version-check',
      '--no-input',
      '--target',
      work,
      '-r',
      requirements,
    ],
    { logFile, env: { ...process.env, PYTHONNOUSERSITE: '1', PIP_NO_INPUT: '1' } },
  );
  if (code !== 0) {
    await rm(work, { recursive: true, force: true });
    throw new ControlPlaneError(`pip install of tools/python/${set}/requirements.txt failed (exit ${code})`, logFile);
  }
  const distributions = (await readdir(work)).filter((n) => n.endsWith('.dist-info')).sort();
  if (distributions.length !== pinned.length) {
    await rm(work, { recursive: true, force: true });
    throw new ControlPlaneError(
      `pip installed ${distributions.length} distributions for tools/python/${set}, but its requirements.txt pins ${pinned.length}`,
      logFile,
    );
  }
  const record: CompleteRecord = {
    set,
    python: await pythonVersion(python),
    installedAt: new Date().toISOString(),
    installSeconds: Math.round((Date.now() - started) / 1000),
    distributions,
  };
  await writeFile(join(work, COMPLETE), `${JSON.stringify(record, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(work, dir);
  log(`installed the Python set ${set} in ${record.installSeconds} s`);
}
