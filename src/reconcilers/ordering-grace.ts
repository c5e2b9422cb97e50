/**
 * GitOps tools and `kubectl apply -f dir/` send related objects in no particular order, so a
 * DeployedModel often arrives a moment before its endpoint. Reporting `EndpointNotFound` for that
 * moment costs a status write and a Warning Event per object and tells the user nothing. For a
 * short grace after the operator first sees a new object (one with no Ready condition yet), such
 * ordering states are held back: the reconcile is retried after the grace, and the dependency's
 * own watch event re-runs it sooner when the dependency arrives. After the grace the state is
 * reported as usual; an object that was ever reported is always updated at once.
 */
import { realClock, type Clock } from '../base/clock.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { readyConditionOf } from './status-common.js';

export const ORDERING_GRACE_MS = 2_000;

/** Reasons that mean "another object of the same apply has not arrived (yet)". */
export const ORDERING_REASONS: ReadonlySet<string> = new Set([
  'EndpointNotFound',
  'ParentNotFound',
  'TrafficSplitUnresolved',
  'ModelNotFound',
]);

export class OrderingGrace {
  private readonly firstSeen = new Map<string, number>();

  constructor(
    private readonly graceMs: number = ORDERING_GRACE_MS,
    private readonly clock: Clock = realClock,
  ) {}

  /** How long to hold back `reason` for `obj` (0 = report it now). */
  holdMs(obj: KubeObject, reason: string): number {
    const uid = obj.metadata.uid ?? '';
    // Reported once: never held again, so nothing needs remembering (only new objects are kept, not every cached one).
    if (readyConditionOf(obj.status) !== undefined) {
      this.firstSeen.delete(uid);
      return 0;
    }
    const now = this.clock.now();
    let seen = this.firstSeen.get(uid);
    if (seen === undefined) {
      seen = now;
      this.firstSeen.set(uid, now);
    }
    if (!ORDERING_REASONS.has(reason)) return 0;
    return Math.max(0, seen + this.graceMs - now);
  }

  forget(uid: string): void {
    this.firstSeen.delete(uid);
  }

  /** Objects remembered: those seen with no Ready condition yet. */
  get size(): number {
    return this.firstSeen.size;
  }
}
