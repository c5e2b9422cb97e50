/**
 * What a field manager currently owns of an object, as an apply configuration (client-go's `ExtractInto`): a
 * manager's next apply must repeat every field it still wants, or server-side apply removes it. So a caller's
 * write is "what this caller's manager owns now, plus the change": uploading version 2 keeps version 1, moving an
 * alias keeps the display name. Read from the manager's `Apply` entry of `metadata.managedFields` (fieldsV1:
 * `f:name` a field or map key, `k:{...}` a list entry by its keys, `v:...` a set member, `.` the node itself).
 */
import { isRecord, type KubeObject } from '../../api/common/kube-object.js';

type Json = unknown;

function extract(fields: Record<string, unknown>, value: Json): Json {
  const children = Object.keys(fields).filter((k) => k !== '.');
  // A leaf (or an atomic value): owned whole.
  if (children.length === 0) return value;
  if (Array.isArray(value)) {
    const out: Json[] = [];
    for (const key of children) {
      const sub = fields[key];
      if (!isRecord(sub)) continue;
      if (key.startsWith('k:')) {
        const wanted = JSON.parse(key.slice(2)) as Record<string, unknown>;
        const item = value.find(
          (v) => isRecord(v) && Object.entries(wanted).every(([k, w]) => JSON.stringify(v[k]) === JSON.stringify(w)),
        );
        if (item !== undefined) {
          const part = extract(sub, item);
          out.push(isRecord(part) ? { ...wanted, ...part } : part);
        }
      } else if (key.startsWith('v:')) {
        out.push(JSON.parse(key.slice(2)));
      } else if (key.startsWith('i:')) {
        const item = value[Number(key.slice(2))];
        if (item !== undefined) out.push(extract(sub, item));
      }
    }
    return out;
  }
  if (!isRecord(value)) return value;
  const out: Record<string, Json> = {};
  for (const key of children) {
    const sub = fields[key];
    if (!key.startsWith('f:') || !isRecord(sub)) continue;
    const name = key.slice(2);
    if (!(name in value)) continue;
    out[name] = extract(sub, value[name]);
  }
  return out;
}

/** The fields `manager` applied to `obj` (its Apply entry of the main resource), as a partial object. */
export function ownedFields(obj: KubeObject | undefined, manager: string): Record<string, unknown> {
  const entry = obj?.metadata.managedFields?.find(
    (e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === '',
  );
  if (obj === undefined || entry === undefined || !isRecord(entry.fieldsV1)) return {};
  const owned = extract(entry.fieldsV1, obj);
  return isRecord(owned) ? owned : {};
}

/** The managers that own anything under `spec` of `obj`, outside its status subresource. */
export function specManagers(obj: KubeObject): string[] {
  const out = new Set<string>();
  for (const e of obj.metadata.managedFields ?? []) {
    if ((e.subresource ?? '') !== '' || !isRecord(e.fieldsV1) || e.manager === undefined) continue;
    if (isRecord(e.fieldsV1['f:spec'])) out.add(e.manager);
  }
  return [...out];
}

/** When `manager` last applied to `obj` (its managedFields entry's time), if it ever did. */
export function appliedAt(obj: KubeObject, manager: string): string | undefined {
  return obj.metadata.managedFields?.find((e) => e.manager === manager && e.operation === 'Apply')?.time;
}

/** `items` with each of `entries` put in place of the item with the same `key` (or appended). */
export function withKeyed<T extends Record<string, unknown>>(
  items: readonly T[] | undefined,
  entries: readonly T[],
  key: keyof T,
): T[] {
  const out = [...(items ?? [])];
  for (const e of entries) {
    const at = out.findIndex((i) => i[key] === e[key]);
    if (at >= 0) out[at] = e;
    else out.push(e);
  }
  return out;
}

/** The managers owning the field at `path` (e.g. ['spec', 'labels']) of `obj`, outside its status subresource. */
export function fieldManagers(obj: KubeObject, path: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of obj.metadata.managedFields ?? []) {
    if ((e.subresource ?? '') !== '' || e.manager === undefined) continue;
    let at: unknown = e.fieldsV1;
    for (const p of path) at = isRecord(at) ? at[`f:${p}`] : undefined;
    if (at !== undefined) out.push(e.manager);
  }
  return out;
}

/** The managers owning a list entry `k:{key:value}` of the list at `path` (e.g. ['spec', 'versions']). */
export function entryManagers(obj: KubeObject, path: readonly string[], key: string, value: string): string[] {
  const entry = `k:${JSON.stringify({ [key]: value })}`;
  const out: string[] = [];
  for (const e of obj.metadata.managedFields ?? []) {
    if ((e.subresource ?? '') !== '' || e.manager === undefined) continue;
    let at: unknown = e.fieldsV1;
    for (const p of path) at = isRecord(at) ? at[`f:${p}`] : undefined;
    if (isRecord(at) && entry in at) out.push(e.manager);
  }
  return out;
}
