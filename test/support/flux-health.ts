/**
 * Flux's reading of objects through the Kustomization's healthCheckExprs (examples/flux), by Flux's own
 * evaluator: `tools/flux-health`, a Go program on github.com/fluxcd/pkg/runtime/cel's StatusEvaluator (RFC-0009),
 * the code kustomize-controller runs. It is built from the Go module proxy on first use and cached like the
 * cluster's binaries (src/devcluster/go-build.ts).
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { ensureGoBuild, type GoModuleBuild } from '../../src/devcluster/go-build.js';
import { REPO_ROOT } from './examples.js';

export const FLUX_EXAMPLE = 'examples/flux/kustomization.yaml';

/** The fluxcd/pkg/runtime release tools/flux-health/go.mod requires. */
export const FLUX_HEALTH: GoModuleBuild = { module: 'flux-health', version: 'runtime-v0.117.0', binaries: ['flux-health'] };

export interface FluxHealthCheck {
  readonly apiVersion: string;
  readonly kind: string;
  readonly current: string;
  readonly inProgress?: string;
  readonly failed?: string;
}

export type FluxStatus = 'InProgress' | 'Failed' | 'Current';

export async function loadFluxHealthChecks(): Promise<FluxHealthCheck[]> {
  const doc = yaml.load(await readFile(join(REPO_ROOT, FLUX_EXAMPLE), 'utf8')) as { spec: { healthCheckExprs: FluxHealthCheck[] } };
  return doc.spec.healthCheckExprs;
}

/** Flux's reading of each object (with its apiVersion and kind), in order, by the check of its group and kind. */
export async function fluxReadings(checks: readonly FluxHealthCheck[], objects: readonly unknown[]): Promise<FluxStatus[]> {
  const binary = (await ensureGoBuild(FLUX_HEALTH))['flux-health'] ?? 'flux-health';
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve((JSON.parse(stdout) as { status: FluxStatus }[]).map((r) => r.status)) : reject(new Error(`flux-health exited ${String(code)}: ${stderr.trim()}`))));
    child.stdin.end(JSON.stringify({ checks, objects }));
  });
}
