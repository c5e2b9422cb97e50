/**
 * kstatus's reading of objects, by kstatus itself: `tools/kstatus`, a small Go program on
 * sigs.k8s.io/cli-utils pkg/kstatus/status, calls status.Compute on each object, as Flux's
 * kustomize-controller (`wait`, `healthChecks`), kpt and cli-utils do. It is built from the Go module proxy on
 * first use and cached like the cluster's binaries (src/devcluster/go-build.ts).
 */
import { spawn } from 'node:child_process';
import { ensureGoBuild, type GoModuleBuild } from '../../src/devcluster/go-build.js';

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
  const binary = (await ensureGoBuild(KSTATUS))['kstatus'] ?? 'kstatus';
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as KstatusResult[]) : reject(new Error(`kstatus exited ${String(code)}: ${stderr.trim()}`))));
    child.stdin.end(JSON.stringify(objects));
  });
}

/** kstatus's reading of one object. */
export async function kstatus(object: Readable): Promise<KstatusResult> {
  const [reading] = await kstatusOf([object]);
  if (reading === undefined) throw new Error('kstatus returned no reading');
  return reading;
}
