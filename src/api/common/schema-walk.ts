import type { z } from 'zod';

/**
 * Reading a zod schema's structure (objects, maps, lists, optional fields), for the rules that
 * follow the schema rather than one field: unset values (unset.ts), fields a version does not
 * have (unknown-fields.ts) and map keys in field paths (decode.ts). Future fields are covered
 * the moment they are added to a schema.
 */

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
}

export function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'readonly', 'catch', 'prefault', 'nonoptional']);

/** The schema under optional/default/pipe/lazy wrappers: the node that says what the value is. */
export function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 32; i++) {
    const def = defOf(s);
    if (WRAPPERS.has(def.type) && def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else if (def.type === 'lazy' && def.getter) s = def.getter();
    else return s;
  }
  return s;
}

/** True when the field may be left out (`.optional()` or `.default()` somewhere around it). */
export function isOptionalField(schema: z.ZodType): boolean {
  let s = schema;
  for (let i = 0; i < 32; i++) {
    const def = defOf(s);
    if (def.type === 'optional' || def.type === 'default' || def.type === 'prefault') return true;
    if (WRAPPERS.has(def.type) && def.innerType) s = def.innerType;
    else return false;
  }
  return false;
}

/** How a schema node treats the keys of an object value. */
export type Node =
  | { readonly kind: 'object'; readonly field: (name: string) => z.ZodType | undefined; readonly names: () => string[] }
  | { readonly kind: 'map'; readonly value: z.ZodType }
  | { readonly kind: 'list'; readonly element: z.ZodType }
  | { readonly kind: 'string' }
  | { readonly kind: 'other' };

/**
 * Schemas are built once at load time and walked on every validation (the webhook's hot path), so
 * each node's structure is worked out once.
 */
const nodes = new WeakMap<z.ZodType, Node>();

/** The structure of a schema node; a union of objects is an object with the fields of every option. */
export function nodeOf(schema: z.ZodType): Node {
  let node = nodes.get(schema);
  if (node === undefined) {
    node = computeNode(schema);
    nodes.set(schema, node);
  }
  return node;
}

function computeNode(schema: z.ZodType): Node {
  const s = unwrap(schema);
  const def = defOf(s);
  if (def.type === 'object' && def.shape) {
    const fields = new Map(Object.entries(def.shape));
    const names = [...fields.keys()];
    return { kind: 'object', field: (name) => fields.get(name), names: () => names };
  }
  if (def.type === 'record' && def.valueType) return { kind: 'map', value: def.valueType };
  if (def.type === 'array' && def.element) return { kind: 'list', element: def.element };
  if (def.type === 'string') return { kind: 'string' };
  if (def.type === 'union' && def.options) {
    const objects = def.options.map(nodeOf).filter((n): n is Extract<Node, { kind: 'object' }> => n.kind === 'object');
    if (objects.length > 0 && objects.length === def.options.length) {
      return {
        kind: 'object',
        field: (name) => objects.map((o) => o.field(name)).find((f) => f !== undefined),
        names: () => [...new Set(objects.flatMap((o) => o.names()))],
      };
    }
  }
  return { kind: 'other' };
}

/** True when the schema node reached by `segments` is a record (map), so the next segment is a map key. */
export function isRecordAt(schema: z.ZodType, segments: readonly PropertyKey[]): boolean {
  return schemaAt(schema, segments)?.kind === 'map';
}

/** The node reached by following `segments` (field names, map keys, list indexes), if the schema has that path. */
export function schemaAt(schema: z.ZodType, segments: readonly PropertyKey[]): Node | undefined {
  let node = nodeOf(schema);
  for (const segment of segments) {
    let next: z.ZodType | undefined;
    if (node.kind === 'object') next = node.field(String(segment));
    else if (node.kind === 'map') next = node.value;
    else if (node.kind === 'list') next = node.element;
    if (next === undefined) return undefined;
    node = nodeOf(next);
  }
  return node;
}

/**
 * True when `""` in this field means unset: an optional string field that does not declare a
 * minimum length (a `.min(1)` field says that "" is no value for it, and the CRD keeps that).
 */
const emptyUnset = new WeakMap<z.ZodType, boolean>();

export function isEmptyUnset(field: z.ZodType): boolean {
  let answer = emptyUnset.get(field);
  if (answer === undefined) {
    answer = computeEmptyUnset(field);
    emptyUnset.set(field, answer);
  }
  return answer;
}

function computeEmptyUnset(field: z.ZodType): boolean {
  if (!isOptionalField(field)) return false;
  const inner = unwrap(field);
  if (defOf(inner).type !== 'string') return false;
  const min = (inner as unknown as { minLength?: number | null }).minLength;
  return min === null || min === undefined || min <= 0;
}
