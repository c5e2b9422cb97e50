/**
 * The fields one field manager owns in an object, with their current values: the manager's "applied
 * configuration", as client-go's `Extract<Kind>()` (k8s.io/client-go/applyconfigurations) reads it from
 * metadata.managedFields. Server-side apply removes a field its manager owned alone and no longer applies, so a
 * write that changes one field of an object the same caller wrote before sends this plus its change; sending the
 * whole object instead would make the caller co-own every field, and another manager's (Argo CD's) next change
 * of one of them a conflict. Pure.
 */
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';

/** The spec fields (and metadata labels/annotations) `manager` owns through Apply, or undefined if it owns none. */
export function ownedConfiguration(
  object: KubeObject,
  manager: string,
): { metadata?: Record<string, unknown>; spec?: Record<string, unknown> } | undefined {
  const entry = (object.metadata.managedFields ?? []).find(
    (e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === '',
  );
  if (entry === undefined || !isRecord(entry.fieldsV1)) return undefined;
  const owned = extract(object as unknown as Record<string, unknown>, entry.fieldsV1);
  if (!isRecord(owned)) return undefined;
  const out: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> } = {};
  if (isRecord(owned.spec)) out.spec = owned.spec;
  if (isRecord(owned.metadata)) {
    const { labels, annotations } = owned.metadata;
    out.metadata = {
      ...(isRecord(labels) ? { labels } : {}),
      ...(isRecord(annotations) ? { annotations } : {}),
    };
  }
  return out;
}

/** The part of `value` that `fields` (a fieldsV1 set) names. */
export function extract(value: unknown, fields: Record<string, unknown>): unknown {
  const members = Object.keys(fields).filter((k) => k !== '.');
  // A leaf, an atomic map or list, or a granular one owned as a whole: the value as it is.
  if (members.length === 0) return fields['.'] !== undefined && isRecord(value) ? {} : value;
  if (Array.isArray(value)) return extractItems(value, fields, members);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const member of members) {
    if (!member.startsWith('f:')) continue;
    const name = member.slice(2);
    const child = fields[member];
    if (!(name in value) || !isRecord(child)) continue;
    out[name] = extract(value[name], child);
  }
  return out;
}

function extractItems(items: readonly unknown[], fields: Record<string, unknown>, members: string[]): unknown[] {
  const out: unknown[] = [];
  for (const member of members) {
    const child = fields[member];
    if (!isRecord(child)) continue;
    if (member.startsWith('k:')) {
      const key = JSON.parse(member.slice(2)) as unknown;
      if (!isRecord(key)) continue;
      const item = items.find((i) => isRecord(i) && Object.entries(key).every(([k, v]) => i[k] === v));
      // The key fields identify the item; they are always applied with it.
      if (item !== undefined) out.push({ ...(extract(item, child) as Record<string, unknown>), ...key });
    } else if (member.startsWith('v:')) {
      out.push(JSON.parse(member.slice(2)));
    } else if (member.startsWith('i:')) {
      const item = items[Number(member.slice(2))];
      if (item !== undefined) out.push(extract(item, child));
    }
  }
  return out;
}
