/**
 * Flux's reading of objects through the Kustomization's healthCheckExprs (examples/flux), by Flux's own
 * evaluator: `tools/flux-health`, a Go program on github.com/fluxcd/pkg/runtime/cel's StatusEvaluator (RFC-0009),
 * the code kustomize-controller runs. It is built from the Go module proxy on first use and cached like the
 * cluster's binaries (dev/cluster/go-build.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { GoModuleBuild } from '../../dev/cluster/go-build.js';
import { REPO_ROOT } from './examples.js';
import { runGoJsonProgram } from './go-json-program.js';

export const FLUX_EXAMPLE = 'examples/flux/kustomization.yaml';

/** The fluxcd/pkg/runtime release tools/flux-health/go.mod requires. */
export const FLUX_HEALTH: GoModuleBuild = {
  module: 'flux-health',
  version: 'runtime-v0.117.0',
  binaries: ['flux-health'],
};

export interface FluxHealthCheck {
  readonly apiVersion: string;
  readonly kind: string;
  readonly current: string;
  readonly inProgress?: string;
  readonly failed?: string;
}

export type FluxStatus = 'InProgress' | 'Failed' | 'Current';

export async function loadFluxHealthChecks(): Promise<FluxHealthCheck[]> {
  const doc = yaml.load(await readFile(join(REPO_ROOT, FLUX_EXAMPLE), 'utf8')) as {
    spec: { healthCheckExprs: FluxHealthCheck[] };
  };
  return doc.spec.healthCheckExprs;
}

/** Flux's reading of each object (with its apiVersion and kind), in order, by the check of its group and kind. */
export async function fluxReadings(
  checks: readonly FluxHealthCheck[],
  objects: readonly unknown[],
): Promise<FluxStatus[]> {
  return ((await runGoJsonProgram(FLUX_HEALTH, { checks, objects })) as { status: FluxStatus }[]).map((r) => r.status);
}
