/**
 * kstatus's reading of a custom resource, as sigs.k8s.io/cli-utils pkg/kstatus/status computes it
 * (status.Compute for a kind without built-in rules): what Flux's kustomize-controller (`wait`,
 * `healthChecks`), kpt and `kubectl`-less GitOps tools conclude. The rules, in order:
 *  1. metadata.deletionTimestamp set → Terminating ("Resource scheduled for deletion");
 *  2. checkGeneration: status.observedGeneration present and ≠ metadata.generation → InProgress
 *     (LatestGenerationNotObserved);
 *  3. the first of Reconciling=True → InProgress, Stalled=True → Failed, in list order;
 *  4. checkReadyCondition: Ready True → Current, False or Unknown → InProgress;
 *  5. none of the above (no known condition) → Current ("Resource is current").
 * The tests' reader of live objects; it mirrors the library, it is not part of the operator.
 */
export type KstatusStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating';

export interface KstatusResult {
  readonly status: KstatusStatus;
  readonly message: string;
}

interface Readable {
  readonly kind?: string;
  readonly metadata?: { readonly generation?: number; readonly deletionTimestamp?: string };
  readonly status?: unknown;
}

interface LooseCondition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
}

function conditionsOf(status: unknown): LooseCondition[] {
  if (typeof status !== 'object' || status === null) return [];
  const list = (status as { conditions?: unknown }).conditions;
  return Array.isArray(list) ? (list as LooseCondition[]) : [];
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export function kstatus(obj: Readable): KstatusResult {
  const deletion = obj.metadata?.deletionTimestamp;
  if (deletion !== undefined && deletion !== '') return { status: 'Terminating', message: 'Resource scheduled for deletion' };
  const generation = obj.metadata?.generation;
  const observed = typeof obj.status === 'object' && obj.status !== null ? (obj.status as { observedGeneration?: unknown }).observedGeneration : undefined;
  if (typeof generation === 'number' && typeof observed === 'number' && observed !== generation) {
    return { status: 'InProgress', message: `${obj.kind ?? 'resource'} generation is ${generation}, but latest observed generation is ${observed}` };
  }
  const conditions = conditionsOf(obj.status);
  for (const c of conditions) {
    if (c.type === 'Reconciling' && c.status === 'True') return { status: 'InProgress', message: text(c.message) };
    if (c.type === 'Stalled' && c.status === 'True') return { status: 'Failed', message: text(c.message) };
  }
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready !== undefined) {
    return ready.status === 'True' ? { status: 'Current', message: 'Resource is Ready' } : { status: 'InProgress', message: text(ready.message) };
  }
  return { status: 'Current', message: 'Resource is current' };
}
