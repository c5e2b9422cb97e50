/**
 * Pieces every reconciler's status computation shares: the Ready condition with Kubernetes'
 * transition semantics, timestamps in metav1.Time form, and defensive reads of objects that came
 * from the API server (a webhook can be bypassed, so nothing in spec is trusted to be well-typed).
 */
import { isRecord } from '../api/common/kube-object.js';
import { ConditionType, type Condition, type ReadyVerdict } from '../api/common/conditions.js';
import { rfc3339, withVerdictConditions } from '../runtime/conditions.js';
import type { Clock } from '../base/clock.js';

export type { Condition, ConditionStatus, ReadyVerdict } from '../api/common/conditions.js';
export { rfc3339 } from '../runtime/conditions.js';

export const READY = ConditionType.Ready;

/** The clock's time in metav1.Time form: what a status write stamps. */
export function statusTime(clock: Clock): string {
  return rfc3339(new Date(clock.now()));
}

/** `conditions` with the verdict's Ready and kstatus conditions for `generation` (see `withVerdictConditions`). */
export function withReadyCondition(
  existing: readonly Condition[] | undefined,
  verdict: ReadyVerdict,
  generation: number | undefined,
  now: string,
): Condition[] {
  return withVerdictConditions(existing, verdict, generation, new Date(now));
}

/** The Ready condition of an object as stored, if any. */
export function readyConditionOf(status: unknown): Condition | undefined {
  const conditions = conditionsOf(status);
  return conditions.find((c) => c.type === READY);
}

/** `status.conditions` decoded defensively: entries that are not conditions are dropped. */
export function conditionsOf(status: unknown): Condition[] {
  if (!isRecord(status) || !Array.isArray(status.conditions)) return [];
  const out: Condition[] = [];
  for (const c of status.conditions as unknown[]) {
    if (!isRecord(c) || typeof c.type !== 'string' || typeof c.reason !== 'string') continue;
    const status = c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
    const cond: Condition = {
      type: c.type,
      status,
      lastTransitionTime: typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : '',
      reason: c.reason,
      message: typeof c.message === 'string' ? c.message : '',
    };
    if (typeof c.observedGeneration === 'number') cond.observedGeneration = c.observedGeneration;
    out.push(cond);
  }
  return out;
}

/**
 * createTime is set once (on the first reconcile, from the object's creation timestamp so that it
 * is the same whichever replica or restart writes it first) and then kept. updateTime moves only
 * when metadata.generation moves: the API server bumps generation on spec changes only, so status
 * and metadata edits do not count as updates.
 */
export function lifecycleTimes(
  previous: { createTime?: unknown; updateTime?: unknown; observedGeneration?: unknown } | undefined,
  metadata: { creationTimestamp?: string | undefined; generation?: number | undefined },
  now: string,
): { createTime: string; updateTime: string } {
  const createTime =
    typeof previous?.createTime === 'string' && previous.createTime !== ''
      ? previous.createTime
      : (metadata.creationTimestamp ?? now);
  const sameGeneration =
    previous?.observedGeneration !== undefined && previous.observedGeneration === metadata.generation;
  const updateTime =
    sameGeneration && typeof previous?.updateTime === 'string' && previous.updateTime !== ''
      ? previous.updateTime
      : previous?.observedGeneration === undefined
        ? createTime
        : now;
  return { createTime, updateTime };
}

export { isRecord };
export { invalidSpecMessage } from '../api/common/field-error.js';

/** `metadata.creationTimestamp` then name: the order in which claims on a shared value are honoured. */
export function olderFirst(
  a: { metadata: { creationTimestamp?: string; name?: string } },
  b: { metadata: { creationTimestamp?: string; name?: string } },
): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}
