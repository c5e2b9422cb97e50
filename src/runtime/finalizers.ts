/**
 * Finalizers: a finalizer makes the apiserver keep an object (with deletionTimestamp set)
 * until the controller has cleaned up and removed it. Writes are merge patches carrying
 * `metadata.resourceVersion`, so the whole `finalizers` list is replaced only if nobody else
 * changed the object meanwhile (409 otherwise; then re-read and retry).
 */
import { isConflict, isNotFound } from '../kube/api-error.js';
import type { ReconcileResult } from './controller.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../api/common/kube-object.js';

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

const MAX_CONFLICT_RETRIES = 5;

/** The calls finalizer handling makes (a KubeClient; unit tests pass a recording fake). */
export type FinalizerClient = Pick<KubeClient, 'get' | 'patch'>;

/** Where and how finalizer patches are sent. */
export interface FinalizerWrite {
  readonly fieldManager?: string | undefined;
  /** Aborts the requests (a reconcile passes `req.signal`). */
  readonly signal?: AbortSignal | undefined;
}

async function patchFinalizers<T extends KubeObject>(
  client: FinalizerClient,
  ref: ResourceRef,
  obj: T,
  edit: (finalizers: string[]) => string[] | undefined,
  write: FinalizerWrite,
): Promise<T | undefined> {
  const { fieldManager, signal } = write;
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
        { type: 'merge', ...(fieldManager ? { fieldManager } : {}), signal },
      );
    } catch (err) {
      if (!isConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      current = await client.get<T>(ref, current.metadata.namespace, name, { signal });
      if (!current) return undefined;
    }
  }
}

/** Adds `finalizer` (no request if present). Returns the updated object, `undefined` if it is gone. */
export function addFinalizer<T extends KubeObject>(
  client: FinalizerClient,
  ref: ResourceRef,
  obj: T,
  finalizer: string,
  write: FinalizerWrite = {},
): Promise<T | undefined> {
  return patchFinalizers(client, ref, obj, (f) => (f.includes(finalizer) ? undefined : [...f, finalizer]), write);
}

/** Removes `finalizer` (no request if absent). Returns the updated object, `undefined` if it is gone (deleted once the last finalizer went). */
export async function removeFinalizer<T extends KubeObject>(
  client: FinalizerClient,
  ref: ResourceRef,
  obj: T,
  finalizer: string,
  write: FinalizerWrite = {},
): Promise<T | undefined> {
  try {
    return await patchFinalizers(
      client,
      ref,
      obj,
      (f) => (f.includes(finalizer) ? f.filter((x) => x !== finalizer) : undefined),
      write,
    );
  } catch (err) {
    // 404 is success: the object is already gone.
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export interface CleanupResult {
  /** `false` keeps the finalizer (deletion stays blocked, e.g. `UndeployBlocked`). */
  readonly done: boolean;
  readonly result: ReconcileResult;
}

export interface FinalizerHandlers<T> {
  /** The object is live and carries the finalizer: make the world match it. */
  apply(object: T): Promise<ReconcileResult>;
  /** The object is being deleted and still carries the finalizer: release what it holds. */
  cleanup(object: T): Promise<CleanupResult>;
  /** After the finalizer was removed (the object may be gone now): forget it, tell the user. */
  released?(object: T): void;
}

/** The finalizer a reconciler keeps on its objects, and how it writes it. */
export interface FinalizerFlow extends FinalizerWrite {
  readonly client: FinalizerClient;
  readonly ref: ResourceRef;
  readonly finalizer: string;
  /** Called after every finalizer patch with the object before and after it (`undefined`: gone). */
  readonly onPatched?: (before: KubeObject, after: KubeObject | undefined) => void;
}

/**
 * The one finalizer flow of every reconciler, routed as kube-rs's `finalizer()` does:
 * - deleting without the finalizer → nothing left to do;
 * - deleting with it → `cleanup`, then remove the finalizer once cleanup is done, then `released`;
 * - live without it → add it, then `apply` with the patched object (kube-rs returns and waits for
 *   the patch's watch event instead; continuing saves one reconcile per new object, and the
 *   patched object carries the resourceVersion the status write must send);
 * - live with it → `apply`.
 */
export async function reconcileWithFinalizer<T extends KubeObject>(
  flow: FinalizerFlow,
  obj: T,
  handlers: FinalizerHandlers<T>,
): Promise<ReconcileResult> {
  const { client, ref, finalizer } = flow;
  const present = hasFinalizer(obj, finalizer);
  if (obj.metadata.deletionTimestamp !== undefined) {
    if (!present) return { action: 'done' };
    const outcome = await handlers.cleanup(obj);
    if (!outcome.done) return outcome.result;
    const after = await removeFinalizer(client, ref, obj, finalizer, flow);
    flow.onPatched?.(obj, after);
    handlers.released?.(obj);
    return outcome.result;
  }
  let live: T | undefined = obj;
  if (!present) {
    live = await addFinalizer(client, ref, obj, finalizer, flow);
    flow.onPatched?.(obj, live);
    if (live === undefined) return { action: 'done' }; // deleted meanwhile
  }
  return handlers.apply(live);
}
