/**
 * Helm itself, 3 and 4, built from the Go module proxy (tools/helm-3, tools/helm-4) on first use and cached like
 * the cluster's binaries (dev/cluster/go-build.ts): the tests lint, render and install the chart with the
 * tool users run.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { selectedRelease } from '../../dev/cluster/binaries.js';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';

/**
 * Helm's release builds set these as here (its Makefile's LDFLAGS): a module build would say only v3.22, and
 * Helm 3 would assume Kubernetes 1.20 when rendering offline; its Makefile takes the Kubernetes minor from the
 * k8s.io/client-go it is built with (v0.37 in tools/helm-3).
 */
const HELM_3_KUBERNETES = ['pkg/lint/rules', 'pkg/chartutil'].flatMap((pkg) => [
  `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1`,
  `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=37`,
]);

function helmBuild(major: 3 | 4, version: string, ldflags: readonly string[] = []): GoModuleBuild {
  return {
    module: `helm-${major}`,
    version,
    binaries: ['helm'],
    ldflags: [`-X helm.sh/helm/v${major}/internal/version.version=${version}`, ...ldflags],
    versionCheck: { args: () => ['version', '--short'], expect: version },
  };
}

export const HELM: Readonly<Record<3 | 4, GoModuleBuild>> = {
  3: helmBuild(3, 'v3.22.0', HELM_3_KUBERNETES),
  4: helmBuild(4, 'v4.3.1'),
};

/** The path of Helm `major`'s binary, built now (minutes, once) when not cached. */
export async function ensureHelm(major: 3 | 4, log: (line: string) => void = () => {}): Promise<string> {
  const helm = (await ensureGoBuild(HELM[major], log))['helm'];
  if (helm === undefined) throw new Error(`no helm among the built binaries of ${HELM[major].module}`);
  return helm;
}

export interface RenderedChart {
  /** Every object the templates render, in Helm's install order, with the template it came from. */
  readonly manifests: { template: string; object: unknown }[];
  /** The objects in the chart's crds/, which Helm installs before the templates (on the first install only). */
  readonly crds: unknown[];
}

export interface Release {
  readonly name: string;
  readonly namespace: string;
}

const run = promisify(execFile);

/** Helm's own environment, kept away from the user's: no repositories, plugins or registry logins. */
async function helmEnv(): Promise<{ env: NodeJS.ProcessEnv; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-helm-'));
  return {
    dir,
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(dir, 'cache'),
      HELM_CONFIG_HOME: join(dir, 'config'),
      HELM_DATA_HOME: join(dir, 'data'),
    },
  };
}

/** `helm ARGS` with its own environment; resolves to stdout, rejects with stderr (and is killed after `timeoutMs`). */
export async function helm(
  binary: string,
  args: readonly string[],
  timeoutMs = 300_000,
): Promise<{ stdout: string; stderr: string }> {
  const { env, dir } = await helmEnv();
  try {
    return await run(binary, args, { env, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, killSignal: 'SIGKILL' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `helm VERB RELEASE CHART -n NS -f <values> ...extra` with `values` written to a file. */
async function withValues(
  binary: string,
  verb: string,
  chartDir: string,
  values: unknown,
  release: Release,
  extra: readonly string[],
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-helm-values-'));
  try {
    const valuesFile = join(dir, 'values.yaml');
    await writeFile(valuesFile, yaml.dump(values));
    return (
      await helm(binary, [verb, release.name, chartDir, '--namespace', release.namespace, '-f', valuesFile, ...extra])
    ).stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const DEFAULT_RELEASE: Release = { name: 'endpoint-operator', namespace: 'default' };

/** `helm template --include-crds` of `chartDir` with `values`, split by source. Nothing reaches a cluster. */
export async function renderChart(
  binary: string,
  chartDir: string,
  values: unknown,
  release: Release = DEFAULT_RELEASE,
  /** Kinds the cluster is to be taken to serve (`--api-versions group/version/Kind`), as `.Capabilities` sees them. */
  apiVersions: readonly string[] = [],
): Promise<RenderedChart> {
  // Rendered for the cluster the tests run, whatever version a Helm build assumes offline.
  const stdout = await withValues(binary, 'template', chartDir, values, release, [
    '--include-crds',
    '--kube-version',
    selectedRelease().version,
    ...apiVersions.flatMap((v) => ['--api-versions', v]),
  ]);
  const manifests: RenderedChart['manifests'] = [];
  const crds: unknown[] = [];
  for (const doc of stdout.split(/^---$/m)) {
    const source = /^# Source: [^/]+\/(.+)$/m.exec(doc)?.[1];
    const object = yaml.load(doc);
    if (source === undefined || object === null || object === undefined) continue;
    if (source.startsWith('crds/')) crds.push(object);
    else manifests.push({ template: source, object });
  }
  return { manifests, crds };
}

/**
 * The NOTES an install prints, from a client-side dry run. Helm 4 only: Helm 3.22's `install --dry-run=client`
 * still asks a cluster for its version.
 */
export async function renderNotes(
  helm4: string,
  chartDir: string,
  values: unknown,
  release: Release = DEFAULT_RELEASE,
): Promise<string> {
  const stdout = await withValues(helm4, 'install', chartDir, values, release, ['--dry-run=client']);
  return (stdout.split(/^NOTES:$/m)[1] ?? '').trim();
}

/** Helm against a cluster: `helm ARGS --kubeconfig KUBECONFIG`, so the user's own kubeconfig is never read. */
export function helmOn(
  binary: string,
  kubeconfig: string,
  args: readonly string[],
  timeoutMs?: number,
): Promise<{ stdout: string; stderr: string }> {
  return helm(binary, [...args, '--kubeconfig', kubeconfig], timeoutMs);
}
