import { REGISTRY_GROUP } from './status.js';

/**
 * RegistryEndpoint conversion, hub and spoke (kubebuilder's pattern): v1 is the hub and the storage
 * version, v1beta1 converts to and from it. v1beta1's `spec.metadata` and `status.effectiveMetadata`
 * are v1's `spec.annotations` and `status.effectiveAnnotations` under older names. Status times are
 * stored in v1 too (the reconciler writes them through the storage version). What v1 cannot
 * hold (`spec.network`) travels in a JSON annotation, as
 * Cluster API does, and is removed again on the way back, so both round trips are identities:
 * a v1beta1 client that reads back what it wrote sees no difference, and neither does a v1 client.
 *
 * If the object already carries that annotation (a user copied it, or a stale one), the old value
 * is kept inside the new one (`previous`) and put back, so even that round-trips.
 */

export const REGISTRY_ENDPOINT_KIND = 'RegistryEndpoint';
export const REGISTRY_V1 = `${REGISTRY_GROUP}/v1`;
export const REGISTRY_V1BETA1 = `${REGISTRY_GROUP}/v1beta1`;
/** Where v1beta1-only fields are kept while the object is stored as v1. */
export const CONVERSION_DATA_ANNOTATION = `${REGISTRY_GROUP}/conversion-data`;

export type ConversionResult = { ok: true; object: Record<string, unknown> } | { ok: false; message: string };

type Json = null | boolean | number | string | Json[] | JsonObject;
interface JsonObject {
  [key: string]: Json;
}

/** The fields only the spoke has, per location: `spec.network`. */
const SPOKE_ONLY: { readonly spec: readonly string[]; readonly status: readonly string[] } = {
  spec: ['network'],
  status: [],
};
/** Same data, different names: [v1beta1, v1] per object. */
const RENAMES = { spec: ['metadata', 'annotations'], status: ['effectiveMetadata', 'effectiveAnnotations'] } as const;

/** The annotation's content: the spoke-only fields, which containers conversion had to create, and a displaced value. */
interface ConversionData {
  spec?: JsonObject;
  status?: JsonObject;
  created?: 'metadata' | 'annotations';
  previous?: Json;
}

class ConversionError extends Error {}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function has(o: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/**
 * `o` with `from` renamed to `to` at the same position (so kubectl shows fields in the written order).
 * Built with Object.fromEntries, which defines own properties even for a key named `__proto__`.
 */
function renameKey(o: JsonObject, from: string, to: string, where: string): JsonObject {
  if (!has(o, from)) return o;
  if (has(o, to))
    throw new ConversionError(`${where} has both ${from} and ${to}; they hold the same data in different versions`);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k === from ? to : k, v])) as JsonObject;
}

function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => has(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function annotationsOf(obj: JsonObject): JsonObject | undefined {
  const meta = obj.metadata;
  return isObject(meta) && isObject(meta.annotations) ? meta.annotations : undefined;
}

function serialise(data: ConversionData): string {
  // Fixed key order, so one content has one text.
  const ordered: JsonObject = {};
  if (data.spec !== undefined) ordered.spec = data.spec;
  if (data.status !== undefined) ordered.status = data.status;
  if (data.created !== undefined) ordered.created = data.created;
  if (data.previous !== undefined) ordered.previous = data.previous;
  return JSON.stringify(ordered);
}

/** v1beta1 → v1 (in place on a copy). */
function toHub(obj: JsonObject): JsonObject {
  obj.apiVersion = REGISTRY_V1;
  const data: ConversionData = {};
  for (const part of ['spec', 'status'] as const) {
    const holder = obj[part];
    if (!isObject(holder)) continue;
    const moved: JsonObject = {};
    for (const field of SPOKE_ONLY[part]) {
      if (!has(holder, field)) continue;
      moved[field] = holder[field] ?? null;
      delete holder[field];
    }
    if (Object.keys(moved).length > 0) data[part] = moved;
    obj[part] = renameKey(holder, RENAMES[part][0], RENAMES[part][1], part);
  }
  const existing = annotationsOf(obj);
  const displaced = existing !== undefined && has(existing, CONVERSION_DATA_ANNOTATION);
  const nothingToKeep = data.spec === undefined && data.status === undefined;
  // A displaced value is left alone unless reading it back as v1beta1 would mistake it for ours.
  if (nothingToKeep && (!displaced || !restoresFrom(obj))) return obj;

  if (obj.metadata === undefined) {
    obj.metadata = {};
    data.created = 'metadata';
  }
  const meta = obj.metadata;
  if (!isObject(meta)) throw new ConversionError('metadata must be an object');
  if (meta.annotations === undefined) {
    meta.annotations = {};
    data.created ??= 'annotations';
  }
  const annotations = meta.annotations;
  if (!isObject(annotations)) throw new ConversionError('metadata.annotations must be a map');
  if (displaced) data.previous = annotations[CONVERSION_DATA_ANNOTATION] ?? null;
  // Assigning keeps the key's position when it was already there.
  annotations[CONVERSION_DATA_ANNOTATION] = serialise(data);
  return obj;
}

/** Reads the annotation's content, or undefined when it is not shaped like ours. */
function parseData(text: Json | undefined): ConversionData | undefined {
  if (typeof text !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  const { spec, status, created, previous, ...rest } = parsed;
  if (Object.keys(rest).length > 0) return undefined;
  if (
    spec !== undefined &&
    (!isObject(spec) || Object.keys(spec).some((k) => !(SPOKE_ONLY.spec as readonly string[]).includes(k)))
  )
    return undefined;
  if (
    status !== undefined &&
    (!isObject(status) || Object.keys(status).some((k) => !(SPOKE_ONLY.status as readonly string[]).includes(k)))
  )
    return undefined;
  if (created !== undefined && created !== 'metadata' && created !== 'annotations') return undefined;
  return {
    ...(spec === undefined ? {} : { spec }),
    ...(status === undefined ? {} : { status }),
    ...(created === undefined ? {} : { created }),
    ...(previous === undefined ? {} : { previous }),
  };
}

/** Puts the annotation's content back into a v1beta1 copy; undefined when it does not fit the object. */
function restore(obj: JsonObject, data: ConversionData): JsonObject | undefined {
  for (const part of ['spec', 'status'] as const) {
    const fields = data[part];
    if (fields === undefined) continue;
    const holder = obj[part];
    if (!isObject(holder)) return undefined;
    for (const [k, v] of Object.entries(fields)) {
      if (has(holder, k)) return undefined;
      holder[k] = v;
    }
  }
  const meta = obj.metadata;
  const annotations = annotationsOf(obj);
  if (!isObject(meta) || annotations === undefined) return undefined;
  if (data.previous !== undefined) annotations[CONVERSION_DATA_ANNOTATION] = data.previous;
  else delete annotations[CONVERSION_DATA_ANNOTATION];
  if (data.created !== undefined && Object.keys(annotations).length === 0) delete meta.annotations;
  if (data.created === 'metadata' && Object.keys(meta).length === 0) delete obj.metadata;
  return obj;
}

/**
 * v1 → v1beta1. The annotation is taken as ours only when converting the result back gives exactly
 * the input; otherwise it is a foreign value and stays where it is.
 */
function fromHubWithFlag(hub: JsonObject): { object: JsonObject; restored: boolean } {
  const plain = structuredClone(hub);
  plain.apiVersion = REGISTRY_V1BETA1;
  for (const part of ['spec', 'status'] as const) {
    const holder = plain[part];
    if (isObject(holder)) plain[part] = renameKey(holder, RENAMES[part][1], RENAMES[part][0], part);
  }
  const data = parseData(annotationsOf(hub)?.[CONVERSION_DATA_ANNOTATION]);
  if (data === undefined) return { object: plain, restored: false };
  const candidate = restore(structuredClone(plain), data);
  if (candidate === undefined) return { object: plain, restored: false };
  let back: JsonObject;
  try {
    back = toHub(structuredClone(candidate));
  } catch (err) {
    if (err instanceof ConversionError) return { object: plain, restored: false };
    throw err;
  }
  return jsonEqual(back, hub) ? { object: candidate, restored: true } : { object: plain, restored: false };
}

/** True when reading this v1 object as v1beta1 would take its conversion annotation as ours. */
function restoresFrom(hub: JsonObject): boolean {
  return fromHubWithFlag(hub).restored;
}

function toJson(obj: unknown): JsonObject | undefined {
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(obj)) as unknown;
  } catch {
    return undefined;
  }
  return isObject(copy) ? copy : undefined;
}

/**
 * Converts a RegistryEndpoint to `desiredAPIVersion` (`registry.endpoint-operator.dev/v1` or
 * `/v1beta1`). Pure and total: a malformed object is an `ok: false` with the reason; an object
 * already at the desired version comes back as an unchanged copy.
 */
export function convertRegistryEndpoint(obj: unknown, desiredAPIVersion: string): ConversionResult {
  if (desiredAPIVersion !== REGISTRY_V1 && desiredAPIVersion !== REGISTRY_V1BETA1) {
    return {
      ok: false,
      message: `cannot convert ${REGISTRY_ENDPOINT_KIND} to ${JSON.stringify(desiredAPIVersion)}: supported versions are ${REGISTRY_V1} and ${REGISTRY_V1BETA1}`,
    };
  }
  const copy = toJson(obj);
  if (copy === undefined) return { ok: false, message: `a ${REGISTRY_ENDPOINT_KIND} must be a JSON object` };
  if (copy.kind !== REGISTRY_ENDPOINT_KIND)
    return { ok: false, message: `expected kind ${REGISTRY_ENDPOINT_KIND}, got ${JSON.stringify(copy.kind ?? null)}` };
  const from = copy.apiVersion;
  if (from === desiredAPIVersion) return { ok: true, object: copy };
  try {
    if (from === REGISTRY_V1BETA1) return { ok: true, object: toHub(copy) };
    if (from === REGISTRY_V1) return { ok: true, object: fromHubWithFlag(copy).object };
  } catch (err) {
    return {
      ok: false,
      message: `cannot convert ${REGISTRY_ENDPOINT_KIND} from ${String(from)} to ${desiredAPIVersion}: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  return {
    ok: false,
    message: `cannot convert ${REGISTRY_ENDPOINT_KIND} from apiVersion ${JSON.stringify(from ?? null)}: supported versions are ${REGISTRY_V1} and ${REGISTRY_V1BETA1}`,
  };
}
