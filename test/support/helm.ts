/**
 * Renders the Helm chart with Helm's engine semantics (Go's text/template, sprig, toYaml, include,
 * required, tpl) by a small Go program, helm-render/main.go, built with the Go toolchain and
 * Debian's sprig and sigs.k8s.io/yaml sources (GOPATH mode from /usr/share/gocode). The missing
 * packages are installed on first use, and the binary is cached under ~/.cache/endpoint-operator keyed by its source and the
 * versions it was built from, so only the first run pays for the build.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureGoTool } from './go-tool.js';

export const HELM_RENDER_PACKAGES = ['golang-go', 'golang-github-masterminds-sprig-dev', 'golang-k8s-sigs-yaml-dev'] as const;
const SOURCE_DIR = new URL('./helm-render/', import.meta.url).pathname;
const SOURCE_FILES = ['main.go', 'go.mod'];

export interface RenderedChart {
  /** Every object the templates render, in template-name order, as Helm's kube client reads it. */
  readonly manifests: { template: string; object: unknown }[];
  /** The objects in the chart's crds/, which Helm installs before the templates. */
  readonly crds: unknown[];
  readonly notes: string;
}

/** The path of the helm-render binary, built now (under a lock, once per source) when not cached. */
export async function ensureHelmRenderer(log: (line: string) => void = () => {}): Promise<string> {
  return ensureGoTool({ name: 'helm-render', sourceDir: SOURCE_DIR, sourceFiles: SOURCE_FILES, packages: HELM_RENDER_PACKAGES }, log);
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
