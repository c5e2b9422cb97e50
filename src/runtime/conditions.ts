/**
 * `metav1.Condition` handling (k8s.io/apimachinery/pkg/api/meta SetStatusCondition):
 * conditions are keyed by `type`; `lastTransitionTime` moves only when `status` changes, so
 * `kubectl wait` and alerting see real transitions, not every reconcile. The schema and the
 * reason catalogue are in src/api/common/conditions.ts.
 */
import type { Condition } from '../api/common/conditions.js';

export type { Condition, ConditionStatus } from '../api/common/conditions.js';

/** What a reconciler states about a condition; the time is filled in by `setCondition`. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** metav1.Time format: RFC 3339 in UTC without fractional seconds. */
export function rfc3339(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Returns a new list with `cond` set: appended if its type is new, replaced otherwise.
 * `lastTransitionTime` is kept when the status is unchanged, set to `now` when it changed.
 */
export function setCondition(conditions: readonly Condition[] | undefined, cond: ConditionInput, now: Date): Condition[] {
  const list = conditions ? [...conditions] : [];
  const i = list.findIndex((c) => c.type === cond.type);
  const existing = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: cond.type,
    status: cond.status,
    ...(cond.observedGeneration !== undefined ? { observedGeneration: cond.observedGeneration } : {}),
    lastTransitionTime: existing && existing.status === cond.status ? existing.lastTransitionTime : rfc3339(now),
    reason: cond.reason,
    message: cond.message,
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}
