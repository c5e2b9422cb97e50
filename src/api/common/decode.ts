import type { z } from 'zod';
import { fieldErrors, type FieldError } from './field-error.js';
import { formatPath } from './field-path.js';

/**
 * Parses `input` with a zod schema and turns every zod issue into a Kubernetes-style
 * FieldError (path, type, bad value, detail). Never throws: a validator built on it can be
 * fed anything a YAML file or an AdmissionReview contains.
 */
export function decode<T>(schema: z.ZodType<T>, input: unknown, root: readonly PropertyKey[] = []): { value?: T; errors: FieldError[] } {
  let result;
  try {
    result = schema.safeParse(input);
  } catch (err) {
    // zod's length checks read `input.length` even after the type check failed, and throw on
    // exotic values (an object whose `length` has no prototype); a validator must stay total.
    return { errors: [fieldErrors.typeInvalid(formatPath(root), input, `has a value of the wrong type that cannot be read (${(err as Error).message})`)] };
  }
  if (result.success) return { value: result.data, errors: [] };
  const errors = result.error.issues.map((issue) => issueToFieldError(schema, input, issue, root));
  return { errors };
}

type Issue = z.core.$ZodIssue;

function issueToFieldError(schema: z.ZodType, input: unknown, issue: Issue, root: readonly PropertyKey[]): FieldError {
  const segments = issue.path;
  const field = formatPath([...root, ...segments], (prefix) => prefix.length >= root.length && isRecordAt(schema, prefix.slice(root.length)));
  const value = valueAt(input, segments);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return fieldErrors.required(field, issue.message === 'Required' || issue.message.startsWith('Invalid input') ? `${field || 'value'} is required` : issue.message);
      return fieldErrors.typeInvalid(field, value, `must be of type ${issue.expected}`);
    case 'too_big':
      if (issue.origin === 'string') return fieldErrors.tooLong(field, value, Number(issue.maximum));
      if (issue.origin === 'array' || issue.origin === 'set' || issue.origin === 'map') return { field, type: 'FieldValueTooMany', value, detail: `must have at most ${String(issue.maximum)} items` };
      return fieldErrors.invalid(field, value, issue.message || `must be less than or equal to ${String(issue.maximum)}`);
    case 'invalid_value':
      return fieldErrors.notSupported(field, value, issue.values.map((v) => String(v)));
    case 'unrecognized_keys':
      return fieldErrors.forbidden(field, `unknown field(s): ${issue.keys.join(', ')}`);
    default:
      return fieldErrors.invalid(field, value, issue.message);
  }
}

/** The value at a zod issue path inside the raw input (zod does not report it unless asked, and never for large inputs). */
export function valueAt(input: unknown, segments: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

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

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 32; i++) {
    const def = defOf(s);
    if ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'readonly' || def.type === 'catch' || def.type === 'prefault' || def.type === 'nonoptional') && def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else if (def.type === 'lazy' && def.getter) s = def.getter();
    else return s;
  }
  return s;
}

/** True when the schema node reached by `segments` is a record (map), so the next segment is a map key. */
export function isRecordAt(schema: z.ZodType, segments: readonly PropertyKey[]): boolean {
  let node: z.ZodType | undefined = unwrap(schema);
  for (const segment of segments) {
    if (!node) return false;
    const def = defOf(node);
    if (def.type === 'object' && def.shape) node = def.shape[String(segment)];
    else if (def.type === 'array' && def.element) node = def.element;
    else if (def.type === 'record' && def.valueType) node = def.valueType;
    else if (def.type === 'union' && def.options) node = def.options.map(unwrap).map((o) => defOf(o).shape?.[String(segment)]).find((s) => s !== undefined);
    else return false;
    if (node) node = unwrap(node);
  }
  return node !== undefined && defOf(node).type === 'record';
}
