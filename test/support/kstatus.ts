/**
 * kstatus's reading of objects, by kstatus itself: `tools/kstatus`, a small Go program on
 * sigs.k8s.io/cli-utils pkg/kstatus/status, calls status.Compute on each object, as Flux's
 * kustomize-controller (`wait`, `healthChecks`), kpt and cli-utils do. It is built from the Go module proxy on
 * first use and cached like the cluster's binaries (dev/cluster/go-build.ts).
 */
import type { GoModuleBuild } from '../../dev/cluster/go-build.js';
import { runGoJsonProgram } from './go-json-program.js';

export type KstatusStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating';

export interface KstatusResult {
  readonly status: KstatusStatus;
  readonly message: string;
}

/** The cli-utils release tools/kstatus/go.mod requires. */
export const KSTATUS: GoModuleBuild = { module: 'kstatus', version: 'cli-utils-v0.37.2', binaries: ['kstatus'] };

interface Readable {
  readonly kind?: string;
  readonly metadata?: { readonly generation?: number; readonly deletionTimestamp?: string };
  readonly status?: unknown;
}

/** kstatus's reading of each object, in order (one process for all of them). */
export async function kstatusOf(objects: readonly Readable[]): Promise<KstatusResult[]> {
  return (await runGoJsonProgram(KSTATUS, objects)) as KstatusResult[];
}

/** kstatus's reading of one object. */
export async function kstatus(object: Readable): Promise<KstatusResult> {
  const [reading] = await kstatusOf([object]);
  if (reading === undefined) throw new Error('kstatus returned no reading');
  return reading;
}
