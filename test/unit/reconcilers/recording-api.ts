/**
 * A recording KubeClient for the reconciler shells' unit tests: an in-memory object store that
 * answers list, watch, get and merge-patch the way the API server does (resourceVersion bumped on
 * every write, 409 on a stale resourceVersion, finalizers holding a deletion), records every call,
 * and can be told to refuse patches. Not a mock of the reconcilers' logic: they run unchanged.
 */
import { ApiError } from '../../../src/kube/api-error.js';
import type { KubeClient, ListOptions, ListResult, PatchOptions, WatchOptions } from '../../../src/kube/kube-client.js';
import { keyOf, type KubeObject, type ResourceRef, type WatchEvent } from '../../../src/api/common/kube-object.js';
import type { EventRecorder } from '../../../src/runtime/events.js';

/** An EventRecorder that keeps each Event as `{type} {reason} {object name}`, in order. */
export function recordingEvents(): { recorder: EventRecorder; events: string[] } {
  const events: string[] = [];
  const recorder = {
    record: async (o: KubeObject, type: string, reason: string) => {
      events.push(`${type} ${reason} ${o.metadata.name ?? ''}`);
      return true;
    },
  } as unknown as EventRecorder;
  return { recorder, events };
}

type Listener = (e: WatchEvent) => void;

export class RecordingApi {
  readonly calls: string[] = [];
  /** Refuse object (not status) patches of these names with this HTTP status. */
  refuse: { names: Set<string>; status: 403 | 500 } = { names: new Set(), status: 500 };
  /** Refuse creating objects of these plurals (403 Forbidden), as an RBAC without the verb would. */
  refuseCreate = new Set<string>();
  private rv = 100;
  private readonly store = new Map<string, Map<string, KubeObject>>(); // plural → key → object
  private readonly watchers = new Map<string, Set<Listener>>();

  private bucket(plural: string): Map<string, KubeObject> {
    let b = this.store.get(plural);
    if (!b) this.store.set(plural, (b = new Map()));
    return b;
  }

  private emit(plural: string, type: WatchEvent['type'], object: KubeObject): void {
    for (const l of this.watchers.get(plural) ?? []) l({ type, object: structuredClone(object) } as WatchEvent);
  }

  /** Creates an object as `kubectl apply` would (resourceVersion and generation set). */
  create(plural: string, obj: KubeObject): void {
    const o = structuredClone(obj);
    o.metadata.resourceVersion = String(++this.rv);
    this.bucket(plural).set(keyOf(o), o);
    this.emit(plural, 'ADDED', o);
  }

  /** Starts a deletion: sets deletionTimestamp, or removes the object when no finalizer holds it. */
  delete(plural: string, namespace: string, name: string): void {
    const o = this.bucket(plural).get(`${namespace}/${name}`);
    if (!o) return;
    if ((o.metadata.finalizers ?? []).length === 0) {
      this.bucket(plural).delete(keyOf(o));
      this.emit(plural, 'DELETED', o);
      return;
    }
    o.metadata.deletionTimestamp = '2026-01-02T00:00:00Z';
    o.metadata.resourceVersion = String(++this.rv);
    this.emit(plural, 'MODIFIED', o);
  }

  /** Edits the spec as a user would (generation bumped). */
  editSpec(plural: string, namespace: string, name: string, spec: Record<string, unknown>): void {
    const o = this.bucket(plural).get(`${namespace}/${name}`);
    if (!o) throw new Error(`no ${plural} ${namespace}/${name}`);
    o.spec = { ...(o.spec as Record<string, unknown>), ...spec };
    o.metadata.generation = (o.metadata.generation ?? 1) + 1;
    o.metadata.resourceVersion = String(++this.rv);
    this.emit(plural, 'MODIFIED', o);
  }

  /** Changes labels only (no generation bump), as `kubectl label` would. */
  label(plural: string, namespace: string, name: string, labels: Record<string, string>): void {
    const o = this.bucket(plural).get(`${namespace}/${name}`);
    if (!o) throw new Error(`no ${plural} ${namespace}/${name}`);
    o.metadata.labels = { ...o.metadata.labels, ...labels };
    o.metadata.resourceVersion = String(++this.rv);
    this.emit(plural, 'MODIFIED', o);
  }

  object(plural: string, namespace: string, name: string): KubeObject | undefined {
    return structuredClone(this.bucket(plural).get(`${namespace}/${name}`));
  }

  /** The client the shard is given. */
  client(): KubeClient {
    const fake = {
      list: async <T>(ref: ResourceRef, _ns: string | undefined, _opts?: ListOptions): Promise<ListResult<T>> => {
        return {
          items: [...this.bucket(ref.plural).values()].map((o) => structuredClone(o)) as T[],
          resourceVersion: String(this.rv),
        };
      },
      watch: (
        ref: ResourceRef,
        _ns: string | undefined,
        _opts: WatchOptions,
        onEvent: (e: WatchEvent) => void,
        signal: AbortSignal,
        onOpen?: () => void,
      ): Promise<void> => {
        let set = this.watchers.get(ref.plural);
        if (!set) this.watchers.set(ref.plural, (set = new Set()));
        set.add(onEvent);
        onOpen?.();
        return new Promise((resolve) =>
          signal.addEventListener(
            'abort',
            () => {
              set.delete(onEvent);
              resolve();
            },
            { once: true },
          ),
        );
      },
      get: async <T>(ref: ResourceRef, ns: string | undefined, name: string): Promise<T | undefined> => {
        this.calls.push(`get ${ref.plural} ${ns}/${name}`);
        return structuredClone(this.bucket(ref.plural).get(`${ns}/${name}`)) as T | undefined;
      },
      patch: async <T>(
        ref: ResourceRef,
        ns: string | undefined,
        name: string,
        patch: { metadata?: { resourceVersion?: string; finalizers?: string[] }; status?: Record<string, unknown> },
        opts: PatchOptions,
      ): Promise<T> => {
        const what = opts.subresource === 'status' ? 'status' : 'object';
        this.calls.push(`patch ${what} ${ref.plural} ${ns}/${name}`);
        if (opts.signal?.aborted) throw new Error('aborted');
        if (what === 'object' && this.refuse.names.has(name)) {
          throw this.refuse.status === 403
            ? new ApiError(403, 'Forbidden', `refused ${name}`, {})
            : new ApiError(500, 'InternalError', `failed ${name}`, {});
        }
        const o = this.bucket(ref.plural).get(`${ns}/${name}`);
        if (!o) throw new ApiError(404, 'NotFound', `${name} not found`, {});
        if (
          patch.metadata?.resourceVersion !== undefined &&
          patch.metadata.resourceVersion !== o.metadata.resourceVersion
        ) {
          throw new ApiError(409, 'Conflict', 'the object has been modified', {});
        }
        if (what === 'status') o.status = mergePatch(o.status, patch.status) as Record<string, unknown>;
        else if (patch.metadata?.finalizers !== undefined) o.metadata.finalizers = patch.metadata.finalizers;
        o.metadata.resourceVersion = String(++this.rv);
        if (o.metadata.deletionTimestamp !== undefined && (o.metadata.finalizers ?? []).length === 0) {
          this.bucket(ref.plural).delete(keyOf(o));
          this.emit(ref.plural, 'DELETED', o);
        } else {
          this.emit(ref.plural, 'MODIFIED', o);
        }
        return structuredClone(o) as T;
      },
      create: async <T>(ref: ResourceRef, ns: string | undefined, body: T): Promise<T> => {
        if (ref.plural === 'events') {
          this.calls.push('create event');
          return body;
        }
        const o = structuredClone(body) as KubeObject;
        o.metadata = { ...o.metadata, namespace: ns ?? '', uid: `uid-${o.metadata.name ?? ''}-${this.rv}` };
        this.calls.push(`create ${ref.plural} ${ns}/${o.metadata.name ?? ''}`);
        if (this.refuseCreate.has(ref.plural)) throw new ApiError(403, 'Forbidden', `${ref.plural} is forbidden`, {});
        if (this.bucket(ref.plural).has(keyOf(o)))
          throw new ApiError(409, 'AlreadyExists', `${o.metadata.name ?? ''} already exists`, {});
        this.create(ref.plural, o);
        return structuredClone(this.bucket(ref.plural).get(keyOf(o))) as T;
      },
      replace: async <T>(ref: ResourceRef, ns: string | undefined, name: string, body: KubeObject): Promise<T> => {
        this.calls.push(`replace ${ref.plural} ${ns}/${name}`);
        const o = this.bucket(ref.plural).get(`${ns}/${name}`);
        if (!o) throw new ApiError(404, 'NotFound', `${name} not found`, {});
        if (body.metadata.resourceVersion !== undefined && body.metadata.resourceVersion !== o.metadata.resourceVersion)
          throw new ApiError(409, 'Conflict', 'the object has been modified', {});
        const next = {
          ...structuredClone(body),
          metadata: { ...structuredClone(body.metadata), resourceVersion: String(++this.rv) },
        };
        this.bucket(ref.plural).set(`${ns}/${name}`, next);
        this.emit(ref.plural, 'MODIFIED', next);
        return structuredClone(next) as T;
      },
      delete: async (ref: ResourceRef, ns: string | undefined, name: string): Promise<boolean> => {
        this.calls.push(`delete ${ref.plural} ${ns}/${name}`);
        const o = this.bucket(ref.plural).get(`${ns}/${name}`);
        if (!o) return false;
        this.bucket(ref.plural).delete(`${ns}/${name}`);
        this.emit(ref.plural, 'DELETED', o);
        return true;
      },
    };
    return fake as unknown as KubeClient;
  }
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
