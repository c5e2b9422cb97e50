/**
 * Renders the Helm chart with Helm's engine semantics (Go's text/template, sprig, toYaml, include,
 * required, tpl) by a small Go program, helm-render/main.go, built with the Go toolchain and
 * Debian's sprig and sigs.k8s.io/yaml sources that the local control plane's build already uses
 * (GOPATH mode from /usr/share/gocode). The missing packages are installed like the control
 * plane's, and the binary is cached under ~/.cache/endpoint-operator keyed by its source and the
 * versions it was built from, so only the first run pays for the build.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackages } from '../../src/devcluster/apt.js';
import { ControlPlaneError } from '../../src/devcluster/errors.js';
import { capture, runLogged } from '../../src/devcluster/exec.js';
import { acquireFileLock } from '../../src/devcluster/file-lock.js';
import { cacheRoot } from '../../src/devcluster/paths.js';

export const HELM_RENDER_PACKAGES = ['golang-go', 'golang-github-masterminds-sprig-dev', 'golang-k8s-sigs-yaml-dev'] as const;
const SOURCE_DIR = new URL('./helm-render/', import.meta.url).pathname;
const SOURCE_FILES = ['main.go', 'go.mod'];
const GOCODE = '/usr/share/gocode';

export interface RenderedChart {
  /** Every object the templates render, in template-name order, as Helm's kube client reads it. */
  readonly manifests: { template: string; object: unknown }[];
  /** The objects in the chart's crds/, which Helm installs before the templates. */
  readonly crds: unknown[];
  readonly notes: string;
}

async function exists(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(() => true, () => false);
}

/** The path of the helm-render binary, built now (under a lock, once per source) when not cached. */
export async function ensureHelmRenderer(log: (line: string) => void = () => {}): Promise<string> {
  const root = cacheRoot();
  await mkdir(join(root, 'logs'), { recursive: true });
  const logFile = join(root, 'logs', 'helm-render.log');
  await ensureDebianPackages(HELM_RENDER_PACKAGES, log, logFile);
  const versions = await capture('dpkg-query', ['-W', '-f=${Package} ${Version}\n', ...HELM_RENDER_PACKAGES]);
  const hash = createHash('sha256').update(versions.stdout);
  for (const file of SOURCE_FILES) hash.update(file).update(await readFile(join(SOURCE_DIR, file)));
  const key = hash.digest('hex').slice(0, 16);
  const binary = join(root, `helm-render-${key}`, 'helm-render');
  if (await exists(binary)) return binary;

  const lock = await acquireFileLock(join(root, 'helm-render.lock'), { onWait: (pid) => log(`waiting for pid ${pid} to build helm-render...`) });
  try {
    if (await exists(binary)) return binary;
    const work = await mkdtemp(join(tmpdir(), 'eo-helm-render-'));
    try {
      // GOPATH mode: Debian's Go sources resolve from /usr/share/gocode, nothing is downloaded. The
      // program sits in a GOPATH of its own because the go command maps `sprig/v3` to Debian's
      // `sprig` tree only for importing code inside a GOPATH with a go.mod.
      const pkg = join(work, 'src', 'helm-render');
      await mkdir(pkg, { recursive: true });
      for (const file of SOURCE_FILES) await copyFile(join(SOURCE_DIR, file), join(pkg, file));
      const env = { ...process.env, GO111MODULE: 'off', GOPATH: `${work}:${GOCODE}`, GOFLAGS: '', CGO_ENABLED: '0', PATH: `/usr/lib/go/bin:${process.env['PATH'] ?? ''}` };
      const code = await runLogged('go', ['build', '-o', join(work, 'helm-render'), '.'], { logFile, env, cwd: pkg });
      if (code !== 0) throw new ControlPlaneError(`building ${join(SOURCE_DIR, 'main.go')} failed (go build exit ${code})`, logFile);
      await mkdir(join(binary, '..'), { recursive: true });
      await rename(join(work, 'helm-render'), binary); // atomic: a reader never sees half a binary
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return binary;
  } finally {
    await lock.release();
  }
}

/** Renders `chartDir` with `values` laid over its values.yaml, as `helm template --include-crds` would. */
export async function renderChart(binary: string, chartDir: string, values: unknown, release = { name: 'endpoint-operator', namespace: 'default' }): Promise<RenderedChart> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-helm-values-'));
  try {
    const valuesFile = join(dir, 'values.json');
    await writeFile(valuesFile, JSON.stringify(values));
    const out = execFileSync(binary, [chartDir, valuesFile, release.name, release.namespace], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(out) as RenderedChart;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
