/**
 * A FieldMask (google.protobuf.FieldMask) applied to a write: the paths as either transport delivers them (a list, or
 * proto3 JSON's comma-joined string; snake_case or camelCase), each checked against the fields a method may change,
 * and the changes written into an intent. UpdateEndpoint, MutateDeployedModel and UpdateModel all go through it.
 * Pure.
 */
import { isRecord } from '../../api/common/kube-object.js';
import type { FieldViolation } from '../google-errors.js';

type Json = Record<string, unknown>;

/** `min_replica_count` → `minReplicaCount` (a FieldMask path may come in either form). */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A FieldMask's paths as the request gives them (a list, or proto3 JSON's comma-joined string), camelCased. */
export function maskPaths(mask: unknown): string[] {
  const paths =
    typeof mask === 'string' ? mask.split(',') : isRecord(mask) && Array.isArray(mask.paths) ? mask.paths : [];
  return paths
    .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
    .map((p) => p.trim().split('.').map(camelCase).join('.'));
}

/** Each masked spec field with its new value (undefined: cleared), or the mask paths that cannot be updated. */
export function maskedChanges(
  from: Json,
  paths: readonly string[],
  allowed: Readonly<Record<string, string>>,
): { changes: [string[], unknown][]; violations: FieldViolation[] } {
  const changes: [string[], unknown][] = [];
  const violations: FieldViolation[] = [];
  if (paths.length === 0)
    violations.push({
      field: 'update_mask',
      description: `required: name the fields to change (${Object.keys(allowed).join(', ')})`,
    });
  for (const path of paths) {
    const target = allowed[path];
    if (target === undefined) {
      violations.push({
        field: 'update_mask',
        description: `${JSON.stringify(path)} cannot be updated by this method; it can update: ${Object.keys(allowed).join(', ')}`,
      });
      continue;
    }
    const segments = path.split('.');
    let value: unknown = from;
    for (const s of segments) value = isRecord(value) ? value[s] : undefined;
    changes.push([target.split('.'), value]);
  }
  return { changes, violations };
}

/** `target` with the value at `path` set (or removed when undefined), creating the objects on the way. */
export function setAt(target: Json, path: readonly string[], value: unknown): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    if (value === undefined) delete target[head];
    else target[head] = value;
    return;
  }
  const next = isRecord(target[head]) ? target[head] : {};
  target[head] = next;
  setAt(next, rest, value);
}

/**
 * Whether a masked value clears its field: absent, or the empty string or empty map proto3 JSON gives for a field
 * the caller left unset in its message.
 */
export function clearsField(value: unknown): boolean {
  return value === undefined || value === '' || (isRecord(value) && Object.keys(value).length === 0);
}

/** The spec paths (`['spec', ...]`) of the changes that clear their field. */
export function clearedPaths(changes: readonly (readonly [readonly string[], unknown])[]): string[][] {
  return changes.filter(([, value]) => clearsField(value)).map(([path]) => ['spec', ...path]);
}
