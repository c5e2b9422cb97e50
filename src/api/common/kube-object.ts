/**
 * The shapes the runtime needs from the Kubernetes API (meta/v1), typed by hand:
 * the generated client-node models are classes with their own (de)serialisers, which
 * the runtime does not use.
 */

/** Names a resource collection on the API server. */
export interface ResourceRef {
  /** API group; `''` is the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  /** Lowercase plural resource name, e.g. `configmaps`, `predictionendpoints`. */
  readonly plural: string;
  readonly namespaced: boolean;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  creationTimestamp?: string;
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** `ADDED`/`MODIFIED`/`DELETED` carry the object; `BOOKMARK` only a resourceVersion; `ERROR` a meta/v1 Status. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** meta/v1 Status, the body of every API error and of watch `ERROR` events. */
export interface Status {
  apiVersion?: string;
  kind?: 'Status';
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

/** A JSON object (not null, not an array); one definition shared with the API layer. */
export { isRecord } from './text.js';

/** The cache/queue key of an object: `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name ?? '');
}

/** Splits a key made by `objectKey` back into its parts. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Well-known core and coordination resources the runtime itself uses. */
export const coreResources = {
  configMaps: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  namespaces: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  events: { group: '', version: 'v1', plural: 'events', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
} as const satisfies Record<string, ResourceRef>;
