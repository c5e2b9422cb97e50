/** JSON value comparison and RFC 7386 merge-patch creation, for status and metadata writes. */
import { isRecord } from '../api/common/kube-object.js';

/** Structural equality of JSON values; object key order is ignored, array order is not. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    // A key holding `undefined` is absent once serialised, so it is treated as absent here too.
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const bk = Object.keys(b).filter((k) => b[k] !== undefined);
    return (
      ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

/**
 * The RFC 7386 merge patch that turns `from` into `to`: changed keys with their new value,
 * removed keys as `null`, arrays replaced whole. Returns `undefined` when nothing changed.
 */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (deepEqual(from, to)) return undefined;
  if (!isRecord(from) || !isRecord(to)) return to === undefined ? null : to;
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    const sub = createMergePatch(from[k], v);
    if (sub !== undefined) patch[k] = sub;
  }
  for (const k of Object.keys(from)) {
    if (from[k] !== undefined && (!(k in to) || to[k] === undefined)) patch[k] = null;
  }
  return patch;
}
