/**
 * Finalizers: a finalizer makes the apiserver keep an object (with deletionTimestamp set)
 * until the controller has cleaned up and removed it. Writes are merge patches carrying
 * `metadata.resourceVersion`, so the whole `finalizers` list is replaced only if nobody else
 * changed the object meanwhile (409 otherwise; then re-read and retry).
 */
import { isConflict, isNotFound } from './api-error.js';
import type { ReconcileResult } from './controller.js';
import type { KubeClient } from './kube-client.js';
import type { KubeObject, ResourceRef } from './kube-object.js';

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

export function isBeingDeleted(obj: KubeObject): boolean {
  return obj.metadata.deletionTimestamp !== undefined;
}

const MAX_CONFLICT_RETRIES = 5;

/** The calls finalizer handling makes (a KubeClient; unit tests pass a recording fake). */
export type FinalizerClient = Pick<KubeClient, 'get' | 'patch'>;

async function patchFinalizers<T extends KubeObject>(
  client: FinalizerClient, ref: ResourceRef, obj: T, edit: (finalizers: string[]) => string[] | undefined, fieldManager?: string,
): Promise<T | undefined> {
  let current: T | undefined = obj;
  for (let attempt = 0; ; attempt++) {
    const next = edit(current.metadata.finalizers ?? []);
    if (next === undefined) return current; // already as wanted
    const name: string = current.metadata.name ?? '';
    try {
      return await client.patch<T>(
        ref,
        current.metadata.namespace,
        name,
        { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: next } },
        { type: 'merge', ...(fieldManager ? { fieldManager } : {}) },
      );
    } catch (err) {
      if (!isConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      current = await client.get<T>(ref, current.metadata.namespace, name);
      if (!current) return undefined;
    }
  }
}

/** Adds `finalizer` (no request if present). Returns the updated object, `undefined` if it is gone. */
export function addFinalizer<T extends KubeObject>(client: FinalizerClient, ref: ResourceRef, obj: T, finalizer: string, fieldManager?: string): Promise<T | undefined> {
  return patchFinalizers(client, ref, obj, (f) => (f.includes(finalizer) ? undefined : [...f, finalizer]), fieldManager);
}

/** Removes `finalizer` (no request if absent). Returns the updated object, `undefined` if it is gone (deleted once the last finalizer went). */
export async function removeFinalizer<T extends KubeObject>(client: FinalizerClient, ref: ResourceRef, obj: T, finalizer: string, fieldManager?: string): Promise<T | undefined> {
  try {
    return await patchFinalizers(client, ref, obj, (f) => (f.includes(finalizer) ? f.filter((x) => x !== finalizer) : undefined), fieldManager);
  } catch (err) {
    // 404 is success: the object is already gone.
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export type FinalizerEvent<T> =
  /** The object is live (and carries the finalizer): make the world match it. */
  | { readonly type: 'apply'; readonly object: T }
  /** The object is being deleted: release what it holds. `done` lets the finalizer go. */
  | { readonly type: 'cleanup'; readonly object: T };

export interface CleanupResult {
  /** `false` keeps the finalizer (deletion stays blocked, e.g. `UndeployBlocked`). */
  readonly done: boolean;
  readonly result: ReconcileResult;
}

export interface FinalizerHandlers<T> {
  apply(object: T): Promise<ReconcileResult>;
  cleanup(object: T): Promise<CleanupResult>;
}

/**
 * Routes a reconcile the way kube-rs's `finalizer()` does:
 * live without the finalizer → add it and wait for the resulting watch event;
 * live with it → `apply`; deleting with it → `cleanup`, then remove it when cleanup is done;
 * deleting without it → nothing left to do.
 */
export async function reconcileWithFinalizer<T extends KubeObject>(
  client: FinalizerClient, ref: ResourceRef, finalizer: string, obj: T, handlers: FinalizerHandlers<T>, fieldManager?: string,
): Promise<ReconcileResult> {
  const present = hasFinalizer(obj, finalizer);
  if (isBeingDeleted(obj)) {
    if (!present) return { action: 'done' };
    const outcome = await handlers.cleanup(obj);
    if (outcome.done) await removeFinalizer(client, ref, obj, finalizer, fieldManager);
    return outcome.result;
  }
  if (!present) {
    // The patch produces a MODIFIED event that enqueues the object again, now with the finalizer.
    await addFinalizer(client, ref, obj, finalizer, fieldManager);
    return { action: 'done' };
  }
  return handlers.apply(obj);
}
