/**
 * How every status reconcile starts and ends. It starts from the informer's cached copy, since a
 * request carries only a key: an object that is gone needs nothing (not an error), and a copy older
 * than our own last status write is skipped, because that write's watch event queues the key again
 * (own-writes.ts). It ends with the one status write, unless the ordering grace holds back a state
 * that another object of the same apply is about to change (ordering-grace.ts).
 */
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import type { KubeObject } from '../api/common/kube-object.js';
import type { ReconcilerContext } from './context.js';
import type { ReconciledKind } from '../api/kind-bindings.js';
import { writeStatus, type StatusComputation } from './status-write.js';

/**
 * The object to reconcile, or `undefined` when there is nothing to do. `skipDeleting`: for kinds
 * without a finalizer of ours, whose status nobody reads once they are being deleted.
 */
export function objectToReconcile(
  ctx: ReconcilerContext,
  which: ReconciledKind,
  req: ReconcileRequest,
  options: { readonly skipDeleting?: boolean } = {},
): KubeObject | undefined {
  const cached = ctx.informers[which].get(req.namespace, req.name);
  if (cached === undefined) {
    // Gone: a write of ours that raced its deletion may have been remembered after the delete handler ran.
    ctx.ownWrites.forgetKey(req.key);
    return undefined;
  }
  if (options.skipDeleting === true && cached.metadata.deletionTimestamp !== undefined) return undefined;
  if (ctx.ownWrites.isStale(cached)) return undefined;
  return cached;
}

/**
 * Writes `status` (computed from `obj`; `compute` recomputes it after a 409), or asks to be run again
 * when the ordering grace holds it back. `holdOrderingStates: false`: for kinds whose reasons never
 * depend on the arrival order of an apply.
 */
export async function reportStatus(
  ctx: ReconcilerContext,
  which: ReconciledKind,
  req: ReconcileRequest,
  obj: KubeObject,
  status: StatusComputation,
  compute: (current: KubeObject) => StatusComputation,
  options: { readonly holdOrderingStates?: boolean } = {},
): Promise<ReconcileResult> {
  if (options.holdOrderingStates !== false) {
    const hold = ctx.grace.holdMs(obj, status.verdict.reason);
    if (hold > 0) return Action.requeueAfter(hold);
  }
  await writeStatus(ctx, which, obj, status, compute, req.signal);
  return Action.done();
}
