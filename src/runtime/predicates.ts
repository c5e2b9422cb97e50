/**
 * Which changes of a watched object matter to a controller (controller-runtime's `predicate`
 * package, kube-rs's `predicates`). A predicate sees updates only: an object that appears or
 * disappears always matters (existence is what dependents check first), and the informer's
 * periodic relist delivers no update when nothing changed.
 */
import type { KubeObject } from '../api/common/kube-object.js';

/** `true` when the change from `oldObj` to `newObj` should enqueue the mapped keys. */
export type Predicate<S extends KubeObject = KubeObject> = (oldObj: S, newObj: S) => boolean;

export const Predicates = {
  /** Every update (the default). */
  any: (() => true) as Predicate,
  /**
   * The spec changed (the API server bumps `metadata.generation` on spec changes only) or the
   * deletion started. Status writes and label or annotation edits pass unnoticed: a parent's own
   * status writes would otherwise re-run every child each time.
   */
  generationChanged: ((oldObj, newObj) =>
    oldObj.metadata.generation !== newObj.metadata.generation ||
    oldObj.metadata.deletionTimestamp !== newObj.metadata.deletionTimestamp) as Predicate,
  /** `metadata.labels` changed (for watches keyed by a label). */
  labelsChanged: ((oldObj, newObj) => !sameRecord(oldObj.metadata.labels, newObj.metadata.labels)) as Predicate,
  /** Any of `predicates` holds. */
  or<S extends KubeObject>(...predicates: Predicate<S>[]): Predicate<S> {
    return (oldObj, newObj) => predicates.some((p) => p(oldObj, newObj));
  },
} as const;

function sameRecord(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => a?.[k] === b?.[k]);
}
