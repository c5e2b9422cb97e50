import { ApiError } from '../../../src/kube/api-error.js';
import type { KubeObject, ResourceRef } from '../../../src/api/common/kube-object.js';
import type { WebhookKubeApi } from '../../../src/webhook/certificate-secret.js';

export interface Call {
  verb: 'get' | 'create' | 'replace' | 'patch';
  plural: string;
  name: string;
  body?: unknown;
}

/**
 * An in-memory stand-in for the few API calls certificate and configuration management make,
 * with the API server's optimistic concurrency (409 on a stale resourceVersion or an existing
 * name) and a log of every call so tests assert exactly what was written.
 */
export class FakeApi implements WebhookKubeApi {
  readonly calls: Call[] = [];
  readonly store = new Map<string, KubeObject>();
  private version = 1;
  /** Runs before a write is applied: lets a test play another replica writing first. */
  beforeWrite?: (verb: Call['verb'], key: string) => void;

  private key(ref: ResourceRef, ns: string | undefined, name: string): string {
    return `${ref.plural}/${ns ?? ''}/${name}`;
  }

  put(ref: ResourceRef, ns: string | undefined, obj: KubeObject): KubeObject {
    const stored = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.version) } });
    this.store.set(this.key(ref, ns, obj.metadata.name ?? ''), stored);
    return stored;
  }

  /** The stored object at `plural/namespace/name`, typed by the test. */
  read<T>(key: string): T {
    return this.store.get(key) as unknown as T;
  }

  writes(): Call[] {
    return this.calls.filter((c) => c.verb !== 'get');
  }

  get<T = KubeObject>(ref: ResourceRef, ns: string | undefined, name: string): Promise<T | undefined> {
    this.calls.push({ verb: 'get', plural: ref.plural, name });
    const o = this.store.get(this.key(ref, ns, name));
    return Promise.resolve(o === undefined ? undefined : (structuredClone(o) as T));
  }

  create<T = KubeObject>(ref: ResourceRef, ns: string | undefined, body: unknown): Promise<T> {
    const obj = body as KubeObject;
    const name = obj.metadata.name ?? '';
    this.calls.push({ verb: 'create', plural: ref.plural, name, body });
    this.beforeWrite?.('create', this.key(ref, ns, name));
    if (this.store.has(this.key(ref, ns, name)))
      return Promise.reject(new ApiError(409, 'AlreadyExists', `${name} already exists`, {}));
    return Promise.resolve(this.put(ref, ns, obj) as T);
  }

  replace<T = KubeObject>(ref: ResourceRef, ns: string | undefined, name: string, body: unknown): Promise<T> {
    this.calls.push({ verb: 'replace', plural: ref.plural, name, body });
    this.beforeWrite?.('replace', this.key(ref, ns, name));
    const current = this.store.get(this.key(ref, ns, name));
    const obj = body as KubeObject;
    if (!current) return Promise.reject(new ApiError(404, 'NotFound', `${name} not found`, {}));
    if (obj.metadata.resourceVersion !== current.metadata.resourceVersion)
      return Promise.reject(new ApiError(409, 'Conflict', 'the object has been modified', {}));
    return Promise.resolve(this.put(ref, ns, obj) as T);
  }

  patch<T = KubeObject>(ref: ResourceRef, ns: string | undefined, name: string, patch: unknown): Promise<T> {
    this.calls.push({ verb: 'patch', plural: ref.plural, name, body: patch });
    const current = this.store.get(this.key(ref, ns, name));
    if (!current) return Promise.reject(new ApiError(404, 'NotFound', `${name} not found`, {}));
    return Promise.resolve(this.put(ref, ns, mergePatch(current, patch) as KubeObject) as T);
  }
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
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
