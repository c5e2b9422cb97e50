/**
 * `metav1.Condition` handling (k8s.io/apimachinery/pkg/api/meta SetStatusCondition):
 * conditions are keyed by `type`; `lastTransitionTime` moves only when `status` changes, so
 * `kubectl wait` and alerting see real transitions, not every reconcile.
 */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  /** RFC 3339, seconds precision (metav1.Time serialises without fractions). */
  lastTransitionTime: string;
  /** UpperCamelCase, one of the typed reasons below. */
  reason: string;
  message: string;
}

/** What a reconciler states about a condition; the time is filled in by `setCondition`. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

export const ConditionType = {
  Ready: 'Ready',
} as const;

/** Reasons shared by every kind; a reconciler may add its own UpperCamelCase reasons. */
export const Reason = {
  /** Ready=True: the spec is realised. */
  Reconciled: 'Reconciled',
  /** Ready=Unknown: first seen, not yet reconciled (the initial status). */
  Pending: 'Pending',
  /** Ready=False: the spec breaks a rule; the message names the field path and the fix. */
  InvalidSpec: 'InvalidSpec',
  /** Ready=False: a RegistryEndpoint's parent RegistryService does not exist (yet). */
  ParentNotFound: 'ParentNotFound',
  /** Ready=False: a DeployedModel's endpointRef names no PredictionEndpoint (yet). */
  EndpointNotFound: 'EndpointNotFound',
  /** Ready=False: a traffic split key names no deployed model. */
  TrafficSplitUnresolved: 'TrafficSplitUnresolved',
  /** Ready=False: a DeployedModel being deleted still receives traffic. */
  UndeployBlocked: 'UndeployBlocked',
  /** Ready=False: an object being deleted still has dependents. */
  DeletionBlocked: 'DeletionBlocked',
  /** Ready=False: a referenced Secret is missing or malformed. */
  SecretNotFound: 'SecretNotFound',
  /** Ready=False: an unexpected failure talking to the API server; retried with backoff. */
  ReconcileError: 'ReconcileError',
} as const;

export type ReasonName = (typeof Reason)[keyof typeof Reason];

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

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}
