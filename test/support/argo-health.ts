/**
 * Runs Argo CD health scripts on gopher-lua, the Lua VM Argo CD embeds, through `tools/argo-health` (a small Go
 * program on github.com/yuin/gopher-lua, built from the Go module proxy on first use and cached like the
 * cluster's binaries: dev/cluster/go-build.ts), with the libraries and globals Argo CD gives a script from argocd-cm.
 */
import { execFileSync } from 'node:child_process';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';

/** The gopher-lua release tools/argo-health/go.mod requires. */
export const ARGO_HEALTH: GoModuleBuild = {
  module: 'argo-health',
  version: 'gopher-lua-v1.1.1',
  binaries: ['argo-health'],
};

export interface HealthCase {
  readonly script: string;
  readonly object: unknown;
}

/** Argo CD's answer (`health.HealthStatus`), or the error Argo CD would log for the script. */
export type HealthResult = { status: string; message?: string } | { error: string };

/** The path of the argo-health binary, built first when the cache has none. */
export async function ensureArgoHealth(log: (line: string) => void = () => {}): Promise<string> {
  const binary = (await ensureGoBuild(ARGO_HEALTH, log))['argo-health'];
  if (binary === undefined) throw new Error('tools/argo-health built no argo-health binary');
  return binary;
}

/** Each case's result, in order; one process for them all. */
export function runHealthScripts(binary: string, cases: readonly HealthCase[]): HealthResult[] {
  const out = execFileSync(binary, [], {
    input: JSON.stringify(cases),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  return JSON.parse(out) as HealthResult[];
}
