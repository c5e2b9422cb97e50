import type { z } from 'zod';
import { isEmptyUnset, nodeOf } from './schema-walk.js';
import { isRecord } from './text.js';

/**
 * The one place that decides what "unset" is, for every field of every kind, present and future:
 *
 * - `null` is unset. The apiserver prunes `null` from fields that are not `nullable` when it decodes a
 *   create or update (structural schemas, Kubernetes 1.20+); a server-side apply's `null` is validated
 *   as sent instead, so the fields a manifest may leave `null` are `nullable` in the CRD and stored as
 *   null (registry/fields.ts). Either way, treating it as a value here would refuse what the cluster accepts.
 * - `""` in an optional string field is unset (unless the field declares a minimum length). The seed: "Defaults when unset: string fields are
 *   empty strings" (proto3), so `network: ""` is the unset network, not a malformed one. The CRD
 *   generator lets the same empty string through the field's pattern (crd/openapi.ts).
 *
 * Required fields keep their `""` so that the validator can say "required". Map values keep theirs
 * too (an empty label or annotation value is a value). The input is not modified; it is returned
 * as is when nothing in it is unset.
 */
export function withoutUnset(schema: z.ZodType, value: unknown): unknown {
  const node = nodeOf(schema);
  if ((node.kind === 'object' || node.kind === 'map') && isRecord(value)) {
    // Copy on write: a spec without unset values (the common case) comes back as it went in.
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const v = value[key];
      // Scalars (most values) need no schema lookup unless they are "".
      let drop = v === null;
      let next = v;
      if (typeof v === 'object' && v !== null) {
        const field = node.kind === 'map' ? node.value : node.field(key);
        if (field !== undefined) next = withoutUnset(field, v);
      } else if (v === '' && node.kind === 'object') {
        const field = node.field(key);
        drop = field !== undefined && isEmptyUnset(field);
      }
      if (out === undefined && (drop || next !== v)) {
        out = {};
        for (let j = 0; j < i; j++) setOwn(out, keys[j] as string, value[keys[j] as string]);
      }
      if (out !== undefined && !drop) setOwn(out, key, next);
    }
    return out ?? value;
  }
  if (node.kind === 'list' && Array.isArray(value)) {
    const next = value.map((v) => withoutUnset(node.element, v));
    return next.every((v, i) => v === value[i]) ? value : next;
  }
  return value;
}

/** `out[key] = value` that also works for a key named `__proto__` (JSON.parse makes it an own property). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
