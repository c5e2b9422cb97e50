import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so that two specs that differ only in key order
 * (YAML written by hand vs. the apiserver's re-serialisation) have the same text. `undefined`
 * members are dropped, as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
  return `{${members.join(',')}}`;
}

/**
 * The fingerprint of a PredictionEndpoint spec written to `status.etag`: a SHA-256 over the
 * canonical JSON of the spec without `spec.etag` itself (otherwise copying the etag into the
 * spec would change it). 22 base64url characters (128 bits) are plenty to tell versions apart.
 * Meant for a spec as stored (JSON, bounded depth).
 */
export function computeEtag(spec: unknown): string {
  let withoutEtag: unknown = spec;
  if (typeof spec === 'object' && spec !== null && !Array.isArray(spec)) {
    const { etag: _etag, ...rest } = spec as Record<string, unknown>;
    withoutEtag = rest;
  }
  return createHash('sha256').update(canonicalJson(withoutEtag)).digest('base64url').slice(0, 22);
}

const MAX_COMPARE_DEPTH = 256;

/**
 * Whether two JSON values are equal regardless of key order (the equality `computeEtag` sees),
 * without serialising them: the admission path compares old and new spec on every update.
 * Values nested deeper than any stored spec can be (the CRD schema bounds the depth) compare as
 * unequal instead of overflowing the stack.
 */
export function jsonEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth > MAX_COMPARE_DEPTH)
    return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i], depth + 1)) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(ra)) {
    if (ra[key] === undefined) continue;
    count++;
    if (!Object.hasOwn(rb, key) || !jsonEqual(ra[key], rb[key], depth + 1)) return false;
  }
  for (const key of Object.keys(rb)) if (rb[key] !== undefined) count--;
  return count === 0;
}
