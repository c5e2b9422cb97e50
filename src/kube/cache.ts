/**
 * The informer's in-memory store: objects keyed `namespace/name`, with secondary indexes
 * (client-go's ThreadSafeStore + Indexers). Objects are kept without `metadata.managedFields`,
 * which is often larger than the rest of the object and never read by a controller.
 */
import { keyOf, objectKey, type KubeObject } from '../api/common/kube-object.js';

export type IndexFunc<T> = (obj: T) => readonly string[];

export interface ReplaceDiff<T> {
  added: T[];
  updated: Array<{ old: T; obj: T }>;
  deleted: T[];
}

export class ObjectCache<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.items.size;
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`index "${name}" already exists`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) for (const v of fn(obj)) addToIndex(index, v, key);
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.items.get(objectKey(namespace, name));
  }

  /** All objects, or those of one namespace. */
  list(namespace?: string): T[] {
    const all = [...this.items.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no index "${indexName}"`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.items.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  /** Stores `obj` (stripped of managedFields) and returns the previous version. */
  upsert(obj: T): { old: T | undefined; stored: T } {
    const stored = stripManagedFields(obj);
    const key = keyOf(stored);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, stored);
    this.index(key, stored);
    return { old, stored };
  }

  /** Removes the object under `key`, returning what was stored. */
  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /**
   * Replaces the whole content with a fresh list and reports the difference. Objects that
   * vanished are reported as deleted: after a relist this is how a delete that happened
   * while the watch was down (or compacted away) still reaches the handlers.
   */
  replace(objects: readonly T[]): ReplaceDiff<T> {
    const diff: ReplaceDiff<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const o of objects) {
      const { old, stored } = this.upsert(o);
      seen.add(keyOf(stored));
      if (!old) diff.added.push(stored);
      else if (old.metadata.resourceVersion !== stored.metadata.resourceVersion)
        diff.updated.push({ old, obj: stored });
    }
    for (const key of [...this.items.keys()]) {
      if (seen.has(key)) continue;
      const gone = this.remove(key);
      if (gone) diff.deleted.push(gone);
    }
    return diff;
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name);
      if (index) for (const v of safeIndex(fn, obj)) addToIndex(index, v, key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name);
      if (!index) continue;
      for (const v of safeIndex(fn, obj)) {
        const set = index.get(v);
        set?.delete(key);
        if (set?.size === 0) index.delete(v);
      }
    }
  }
}

function addToIndex(index: Map<string, Set<string>>, value: string, key: string): void {
  let set = index.get(value);
  if (!set) index.set(value, (set = new Set()));
  set.add(key);
}

/** An index function reads user objects of any shape; one that throws indexes nothing. */
function safeIndex<T>(fn: IndexFunc<T>, obj: T): readonly string[] {
  try {
    return fn(obj);
  } catch {
    return [];
  }
}

export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
