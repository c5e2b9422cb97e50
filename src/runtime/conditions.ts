/**
 * `metav1.Condition` handling (k8s.io/apimachinery/pkg/api/meta SetStatusCondition):
 * conditions are keyed by `type`; `lastTransitionTime` moves only when `status` changes, so
 * `kubectl wait` and alerting see real transitions, not every reconcile. The schema and the
 * reason catalogue are in src/api/common/conditions.ts.
 */
import { ConditionType, REASON_READING, type Condition, type ReadyVerdict } from '../api/common/conditions.js';

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
export function setCondition(
  conditions: readonly Condition[] | undefined,
  cond: ConditionInput,
  now: Date,
): Condition[] {
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

/** Returns a new list without the condition of `type` (`meta.RemoveStatusCondition`). */
export function removeCondition(conditions: readonly Condition[], type: string): Condition[] {
  return conditions.filter((c) => c.type !== type);
}

/**
 * `conditions` with the verdict set for `generation`: `Ready`, and the kstatus condition its reason
 * sets (`Reconciling` or `Stalled`, True, with Ready's reason and message), the other one removed,
 * so kstatus, Flux and Argo CD read the object from conditions alone. Conditions of other types are
 * kept. The same verdict for the same generation yields an identical list, hence no status write.
 */
export function withVerdictConditions(
  existing: readonly Condition[] | undefined,
  verdict: ReadyVerdict,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const observedGeneration = generation ?? 0;
  let list = setCondition(existing, { type: ConditionType.Ready, ...verdict, observedGeneration }, now);
  const progress = REASON_READING[verdict.reason].progress;
  for (const type of [ConditionType.Reconciling, ConditionType.Stalled]) {
    list =
      type === progress
        ? setCondition(
            list,
            { type, status: 'True', reason: verdict.reason, message: verdict.message, observedGeneration },
            now,
          )
        : removeCondition(list, type);
  }
  return list;
}
