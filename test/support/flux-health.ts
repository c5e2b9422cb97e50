/**
 * Flux's reading of an object through the Kustomization's healthCheckExprs (examples/flux), as
 * kustomize-controller evaluates them (Flux RFC-0009, "Design Details"): status.observedGeneration,
 * when present and different from metadata.generation, is InProgress without evaluating anything;
 * then inProgress, failed and current are evaluated in that order and the first true one wins; none
 * true is InProgress. The object's top-level fields are the expressions' variables. CEL is
 * @marcbachmann/cel-js, the implementation the CRD rules are tested with.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Environment } from '@marcbachmann/cel-js';
import yaml from 'js-yaml';
import { REPO_ROOT } from './examples.js';

export const FLUX_EXAMPLE = 'examples/flux/kustomization.yaml';

// Flux's CEL environment has optional types (`.?field`, `orValue`) and the object's fields as dynamic variables.
const cel = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true });

export interface FluxHealthCheck {
  readonly apiVersion: string;
  readonly kind: string;
  readonly current: string;
  readonly inProgress?: string;
  readonly failed?: string;
}

export async function loadFluxHealthChecks(): Promise<FluxHealthCheck[]> {
  const doc = yaml.load(await readFile(join(REPO_ROOT, FLUX_EXAMPLE), 'utf8')) as { spec: { healthCheckExprs: FluxHealthCheck[] } };
  return doc.spec.healthCheckExprs;
}

interface Readable {
  readonly metadata?: { readonly generation?: number };
  readonly status?: { readonly observedGeneration?: unknown };
}

export function fluxReading(checks: readonly FluxHealthCheck[], kind: string, obj: Readable): 'InProgress' | 'Failed' | 'Current' {
  const check = checks.find((c) => c.kind === kind);
  if (check === undefined) throw new Error(`${FLUX_EXAMPLE} has no healthCheckExprs entry for ${kind}`);
  const observed = obj.status?.observedGeneration;
  if (typeof observed === 'number' && observed !== obj.metadata?.generation) return 'InProgress';
  const ordered = [['InProgress', check.inProgress], ['Failed', check.failed], ['Current', check.current]] as const;
  for (const [status, expression] of ordered) {
    if (expression === undefined) continue;
    const result: unknown = cel.evaluate(expression, obj as Record<string, unknown>);
    if (typeof result !== 'boolean') throw new Error(`${kind} ${status} expression returned ${String(result)}, not a boolean`);
    if (result) return status;
  }
  return 'InProgress';
}
