import type { z } from 'zod';
import { isEmptyUnset, nodeOf } from './schema-walk.js';
import { isPlainObject } from './text.js';

/**
 * The one place that decides what "unset" is, for every field of every kind, present and future:
 *
 * - `null` is unset. The apiserver prunes `null` from fields that are not `nullable` before it
 *   validates or stores an object (structural schemas, Kubernetes 1.20+), so a manifest's `null`
 *   never reaches storage: treating it as a value here would refuse what the cluster accepts.
 * - `""` in an optional string field is unset (unless the field declares a minimum length). The seed: "Defaults when unset: string fields are
 *   empty strings" (proto3), so `network: ""` is the unset network, not a malformed one. The CRD
 *   generator lets the same empty string through the field's pattern (crd/openapi.ts).
 *
 * Required fields keep their `""` so that the validator can say "required". Map values keep theirs
 * too (an empty label or annotation value is a value). The input is not modified.
 */
export function withoutUnset(schema: z.ZodType, value: unknown): unknown {
  const node = nodeOf(schema);
  if (node.kind === 'object' && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(value)) {
      if (v === null) continue;
      const field = node.field(name);
      if (field === undefined) {
        setOwn(out, name, v);
        continue;
      }
      if (v === '' && isEmptyUnset(field)) continue;
      setOwn(out, name, withoutUnset(field, v));
    }
    return out;
  }
  if (node.kind === 'map' && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) if (v !== null) setOwn(out, key, withoutUnset(node.value, v));
    return out;
  }
  if (node.kind === 'list' && Array.isArray(value)) return value.map((v) => withoutUnset(node.element, v));
  return value;
}

/** `out[key] = value` that also works for a key named `__proto__` (JSON.parse makes it an own property). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}
