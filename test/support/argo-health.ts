/**
 * Runs Argo CD health scripts on gopher-lua, the Lua VM Argo CD embeds, through argo-health/main.go
 * (Debian's golang-github-yuin-gopher-lua-dev, built on first use like the chart renderer; see
 * go-tool.ts), with the libraries and globals Argo CD gives a script from argocd-cm.
 */
import { execFileSync } from 'node:child_process';
import { ensureGoTool } from './go-tool.js';

export const ARGO_HEALTH_PACKAGES = ['golang-go', 'golang-github-yuin-gopher-lua-dev'] as const;

export interface HealthCase {
  readonly script: string;
  readonly object: unknown;
}

/** Argo CD's answer (`health.HealthStatus`), or the error Argo CD would log for the script. */
export type HealthResult = { status: string; message?: string } | { error: string };

export async function ensureArgoHealth(log: (line: string) => void = () => {}): Promise<string> {
  return ensureGoTool(
    {
      name: 'argo-health',
      sourceDir: new URL('./argo-health/', import.meta.url).pathname,
      sourceFiles: ['main.go'],
      packages: ARGO_HEALTH_PACKAGES,
    },
    log,
  );
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
