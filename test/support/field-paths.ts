/**
 * Checks that a FieldError's path names something in the manifest it was found in, for the fuzz tests of
 * the validators, `endpoint-operator validate` and the webhook. A path is Kubernetes-style
 * (`spec.memberships[0].shop`, `spec.annotations[example.com/team]`); map keys may hold any character
 * (`]` and `.` too), so it is resolved against the object's actual keys rather than split on syntax.
 */
import type { FieldErrorType } from '../../src/api/common/field-error.js';

/** Where a manifest's errors may point: the header, metadata, spec, or the status an etag is compared with. */
export const FIELD_ROOTS = ['apiVersion', 'kind', 'metadata', 'spec', 'status'] as const;

export const FIELD_ERROR_TYPES: readonly FieldErrorType[] = [
  'FieldValueRequired',
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueDuplicate',
  'FieldValueTypeInvalid',
  'FieldValueNotFound',
  'InternalError',
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// What is left of a path once the object has no more of it: plain field names that are absent
// (`metadata.name` of a manifest without metadata), never a map key or list index that does not exist.
const MISSING_FIELDS = /^(\.[A-Za-z_][A-Za-z0-9_]*)+$/;
const MISSING_ROOT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

function boundary(rest: string, at: number): boolean {
  const next = rest[at];
  return next === undefined || next === '.' || next === '[';
}

function resolves(rest: string, node: unknown, atRoot: boolean): boolean {
  if (rest === '') return true;
  if (isObject(node)) {
    // Longest key first: `a.b` must win over `a` when both are keys.
    for (const key of Object.keys(node).sort((a, b) => b.length - a.length)) {
      const child = (node as Record<string, unknown>)[key];
      for (const spelled of atRoot ? [key] : [`.${key}`, `[${key}]`]) {
        if (
          rest.startsWith(spelled) &&
          boundary(rest, spelled.length) &&
          resolves(rest.slice(spelled.length), child, false)
        )
          return true;
      }
    }
  } else if (Array.isArray(node)) {
    const m = /^\[(\d+)\]/.exec(rest);
    if (m && Number(m[1]) < node.length && resolves(rest.slice(m[0].length), node[Number(m[1])], false)) return true;
  }
  return (atRoot ? MISSING_ROOT : MISSING_FIELDS).test(rest);
}

/**
 * Why `field` is not a sensible path for an error about `object` (checked against `oldObject` too: an
 * immutable field may have been removed), or undefined when it is one. The empty path is only sensible
 * when the manifest is not an object at all: then there is no field to name.
 */
export function fieldPathProblem(field: unknown, object: unknown, oldObject?: unknown): string | undefined {
  if (typeof field !== 'string') return `field ${String(field)} is not a string`;
  if (field === '') return isObject(object) ? 'an error about an object manifest has an empty field path' : undefined;
  const root = FIELD_ROOTS.find((r) => field === r || field.startsWith(`${r}.`) || field.startsWith(`${r}[`));
  if (root === undefined) return `field ${JSON.stringify(field)} does not start with ${FIELD_ROOTS.join(', ')}`;
  if (resolves(field, object, true) || (oldObject !== undefined && resolves(field, oldObject, true))) return undefined;
  return `field ${JSON.stringify(field)} names nothing in the manifest`;
}
