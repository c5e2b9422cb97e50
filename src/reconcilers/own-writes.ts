/**
 * Versions of objects that our own writes have already replaced. After a finalizer patch or a
 * status write the informer cache still holds the previous version until the watch event arrives;
 * a reconcile in that window (queued by the event of our first write) would compute from stale
 * status and send a write doomed to 409 Conflict, plus a re-read. Skipping such a reconcile is
 * safe: the watch event of our own write enqueues the object again (client-go controllers solve
 * the same race with "expectations").
 */
import { keyOf, type KubeObject } from '../api/common/kube-object.js';

export class OwnWrites {
  private readonly superseded = new Map<string, Set<string>>();

  /** Records that a write replaced version `before` of the object (the answer carries the new one). */
  replaced(before: KubeObject, after: KubeObject | undefined): void {
    const key = keyOf(before);
    const rv = before.metadata.resourceVersion;
    if (rv === undefined || after?.metadata.resourceVersion === rv) return;
    let set = this.superseded.get(key);
    if (!set) this.superseded.set(key, (set = new Set()));
    set.add(rv);
  }

  /** Whether `cached` is a version one of our writes already replaced (a newer event is on its way). */
  isStale(cached: KubeObject): boolean {
    const key = keyOf(cached);
    const set = this.superseded.get(key);
    if (!set) return false;
    if (cached.metadata.resourceVersion !== undefined && set.has(cached.metadata.resourceVersion)) return true;
    // The cache moved past every version we replaced: nothing to remember any more.
    this.superseded.delete(key);
    return false;
  }

  forget(obj: KubeObject): void {
    this.forgetKey(keyOf(obj));
  }

  /**
   * Forgets the object under `key` (`namespace/name`). A reconcile that finds its object gone calls
   * this: the answer to a write can arrive after the watch's DELETED event (often so when removing the
   * last finalizer deletes the object), and then the delete handler ran before `replaced` recorded it.
   */
  forgetKey(key: string): void {
    this.superseded.delete(key);
  }

  /** Objects with a remembered write. */
  get size(): number {
    return this.superseded.size;
  }
}
