/**
 * Every API write: a server-side apply by the gateway's client under the caller's field manager, stamped with
 * the caller's name (field-manager.ts), after the refuse annotation (refuse.ts) was checked. Conflicts follow
 * conflicts.ts (forced only over other API callers, else ABORTED naming the manager); the apiserver's rules come
 * back as INVALID_ARGUMENT naming the request's fields (field-table.ts); `dryRun` runs admission and writes nothing
 * (a write of two objects dry-runs both first).
 */
import { isRecord } from '../../api/common/kube-object.js';
import { ApiError, type KubeClient, type KubeObject, type ResourceRef } from '../../kube/kube-client.js';
import { GoogleApiError } from '../google-errors.js';
import type { WriteCaller } from './caller.js';
import { applyConflicts, conflictRefusal, mayForce } from './conflicts.js';
import { isApiManager, WRITTEN_BY_ANNOTATION } from './field-manager.js';
import { violationsOfStatus, type FieldTable } from './field-table.js';
import { entryManagers, specManagers } from './owned-fields.js';
import { refusalOf } from './refuse.js';
import { LAST_OPERATION_ANNOTATION, operationStamp, type OperationStamp } from './operations/operation-name.js';

const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

/** The object a write touches. */
export interface WriteObject {
  readonly resource: ResourceRef;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** How messages name it: `Model "iris" in namespace "team-a"`. */
  readonly described: string;
}

export interface ApplyRequest {
  readonly object: WriteObject;
  readonly caller: WriteCaller;
  /**
   * The caller's whole intent besides apiVersion, kind, name and namespace: what its manager owns now
   * (owned-fields.ts) with the change made. `metadata.annotations` may be given; the written-by one is added.
   */
  readonly intent: Record<string, unknown>;
  /** The request's field names for the object's (422 causes). */
  readonly fields: FieldTable;
  readonly dryRun?: boolean;
  /** The write's operation, stamped on the object for ListOperations (operation-name.ts). */
  readonly stamp?: OperationStamp;
}

/** FAILED_PRECONDITION when the Namespace or any of `objects` carries the refuse annotation. */
export async function checkWritable(
  client: KubeClient,
  namespace: string,
  objects: readonly { readonly obj: KubeObject | undefined; readonly described: string }[],
): Promise<void> {
  const ns = await client.get(NAMESPACES, undefined, namespace);
  const refusal =
    refusalOf(ns, `Namespace "${namespace}"`) ??
    objects.map((o) => refusalOf(o.obj, o.described)).find((r) => r !== undefined);
  if (refusal !== undefined) throw refusal;
}

function statusMessage(err: ApiError): string {
  return isRecord(err.body) && typeof err.body.message === 'string' ? err.body.message : err.message;
}

/** The caller's answer for an apiserver refusal of a write. */
export function writeFailure(err: unknown, object: WriteObject, fields: FieldTable): unknown {
  if (!(err instanceof ApiError)) return err;
  const message = statusMessage(err);
  if (err.status === 422 || err.status === 400) {
    const violations = violationsOfStatus(fields, err.body);
    return violations.length > 0
      ? GoogleApiError.badRequest(violations)
      : new GoogleApiError('INVALID_ARGUMENT', `${object.described}: ${message}`);
  }
  if (err.status === 403) {
    // An admission policy's refusal (a deployed Model) is the caller's precondition; RBAC's is the gateway's own.
    if (/ValidatingAdmissionPolicy|admission webhook|denied request|denied the request/.test(message))
      return new GoogleApiError('FAILED_PRECONDITION', message);
    return new GoogleApiError(
      'FAILED_PRECONDITION',
      `the gateway's ServiceAccount may not write ${object.described} (its RBAC: the chart's gateway.apiWrites.enabled): ${message}`,
    );
  }
  if (err.status === 404) return new GoogleApiError('NOT_FOUND', `${object.described} not found: ${message}`);
  if (err.reason === 'AlreadyExists') return new GoogleApiError('ALREADY_EXISTS', `${object.described} already exists`);
  if (err.status === 409)
    return new GoogleApiError('ABORTED', `${object.described} changed meanwhile: ${message}; retry`);
  return err;
}

function applyBody(req: ApplyRequest): Record<string, unknown> {
  const { object, caller, intent } = req;
  const metadata = isRecord(intent.metadata) ? intent.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  return {
    ...intent,
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      ...metadata,
      name: object.name,
      namespace: object.namespace,
      annotations: {
        ...annotations,
        [WRITTEN_BY_ANNOTATION]: caller.username,
        ...(req.stamp !== undefined ? { [LAST_OPERATION_ANNOTATION]: operationStamp(req.stamp) } : {}),
      },
    },
  };
}

/** Applies the caller's intent; resolves to the object as written (as it would be, with dryRun). */
export async function applyAsCaller(client: KubeClient, req: ApplyRequest): Promise<KubeObject> {
  const { object, caller } = req;
  const body = applyBody(req);
  const apply = (force: boolean) =>
    client.patch(object.resource, object.namespace, object.name, body, {
      type: 'apply',
      fieldManager: caller.manager,
      force,
      ...(req.dryRun ? { dryRun: true } : {}),
    });
  try {
    return await apply(false);
  } catch (err) {
    const conflicts = err instanceof ApiError && err.status === 409 ? applyConflicts(err.body) : [];
    if (conflicts.length === 0) throw writeFailure(err, object, req.fields);
    if (!mayForce(conflicts)) throw conflictRefusal(object.described, conflicts);
    try {
      return await apply(true);
    } catch (again) {
      throw writeFailure(again, object, req.fields);
    }
  }
}

export interface DeleteRequest {
  readonly object: WriteObject;
  readonly caller: WriteCaller;
  readonly fields: FieldTable;
  readonly dryRun?: boolean;
}

/**
 * Deletes the object unless a manager other than API callers owns its spec (a GitOps tool would re-create it, or
 * prune its own): ABORTED naming it. Resolves to the object deleted (its uid names the delete's operation).
 */
export async function deleteAsCaller(client: KubeClient, req: DeleteRequest): Promise<KubeObject> {
  const { object } = req;
  const current = await client.get(object.resource, object.namespace, object.name);
  if (current === undefined) throw new GoogleApiError('NOT_FOUND', `${object.described} not found.`);
  await checkWritable(client, object.namespace, [{ obj: current, described: object.described }]);
  const others = specManagers(current).filter((m) => !isApiManager(m));
  if (others.length > 0)
    throw conflictRefusal(
      object.described,
      others.map((manager) => ({ field: 'spec', manager })),
    );
  try {
    const deleted = await client.delete(object.resource, object.namespace, object.name, {
      preconditions: { uid: current.metadata.uid ?? '' },
      ...(req.dryRun ? { dryRun: true } : {}),
    });
    if (!deleted) throw new GoogleApiError('NOT_FOUND', `${object.described} not found.`);
  } catch (err) {
    throw writeFailure(err, object, req.fields);
  }
  return current;
}

/** A list entry a write removes: the list's path and the entry's key (`spec.versionAliases` where alias = "x"). */
export interface RemovedEntry {
  readonly path: readonly string[];
  readonly key: string;
  readonly value: string;
}

function pointer(parts: readonly (string | number)[]): string {
  return parts.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Removes list entries, which server-side apply cannot do for an entry another manager also applied: a JSON patch
 * under the caller's manager, guarded by `test` operations (a concurrent change fails it: ABORTED, retry). An
 * entry any manager other than API callers owns is not removed: ABORTED naming it, nothing written.
 */
export async function removeAsCaller(
  client: KubeClient,
  req: {
    readonly object: WriteObject;
    readonly caller: WriteCaller;
    readonly current: KubeObject;
    readonly entries: readonly RemovedEntry[];
    readonly fields: FieldTable;
    readonly dryRun?: boolean;
  },
): Promise<KubeObject> {
  const { object, caller, current } = req;
  const conflicts = req.entries.flatMap((e) =>
    entryManagers(current, e.path, e.key, e.value)
      .filter((m) => !isApiManager(m))
      .map((manager) => ({ field: `${e.path.join('.')}[${e.key}=${e.value}]`, manager })),
  );
  if (conflicts.length > 0) throw conflictRefusal(object.described, conflicts);
  const located = req.entries.map((e) => {
    let list: unknown = current;
    for (const p of e.path) list = isRecord(list) ? list[p] : undefined;
    const index = Array.isArray(list) ? list.findIndex((x) => isRecord(x) && x[e.key] === e.value) : -1;
    if (index < 0) throw new GoogleApiError('NOT_FOUND', `${object.described} has no ${e.key} "${e.value}".`);
    return { ...e, index };
  });
  located.sort((a, b) => b.index - a.index);
  const ops: unknown[] = [{ op: 'test', path: '/metadata/uid', value: current.metadata.uid }];
  for (const e of located) {
    ops.push({ op: 'test', path: `${pointer([...e.path, e.index, e.key])}`, value: e.value });
    ops.push({ op: 'remove', path: pointer([...e.path, e.index]) });
  }
  ops.push(
    current.metadata.annotations === undefined
      ? { op: 'add', path: '/metadata/annotations', value: { [WRITTEN_BY_ANNOTATION]: caller.username } }
      : { op: 'add', path: pointer(['metadata', 'annotations', WRITTEN_BY_ANNOTATION]), value: caller.username },
  );
  try {
    return await client.patch(object.resource, object.namespace, object.name, ops, {
      type: 'json',
      fieldManager: caller.manager,
      ...(req.dryRun ? { dryRun: true } : {}),
    });
  } catch (err) {
    // A failed `test`: the object changed between the read and the patch.
    if (err instanceof ApiError && err.status === 422 && /test operation|testing value/i.test(statusMessage(err)))
      throw new GoogleApiError('ABORTED', `${object.described} changed meanwhile; retry`);
    throw writeFailure(err, object, req.fields);
  }
}
