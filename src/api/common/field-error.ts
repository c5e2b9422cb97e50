import { codePointLength, truncateText } from './text.js';

/**
 * Field errors in the shape Kubernetes uses (k8s.io/apimachinery/pkg/util/validation/field),
 * so that admission denials, `status.conditions` messages and `endpoint-operator validate`
 * all speak the same language: a field path, an error type, the bad value and a detail.
 */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotFound'
  | 'InternalError';

export interface FieldError {
  /** Path written like Kubernetes writes it: `spec.trafficSplit[123]`, `spec.annotations[example.com/team]`. */
  readonly field: string;
  readonly type: FieldErrorType;
  /** The offending value (omitted from messages when it is a secret or too large). */
  readonly value: unknown;
  /** What the rule is and how to fix it. */
  readonly detail: string;
}

/** What every validator returns: errors refuse the object, warnings are shown but accepted. */
export interface ValidationResult {
  readonly errors: FieldError[];
  readonly warnings: string[];
}

const MAX_VALUE_CHARS = 80;

/**
 * A short, printable rendering of a bad value (a 1 MB string must not flood a terminal or an event).
 * A long string is cut between code points and its length given in characters (code points), the
 * unit every length rule here uses.
 */
export function renderValue(value: unknown): string {
  if (value === undefined) return '<nil>';
  if (typeof value === 'string') {
    const shown = truncateText(value, MAX_VALUE_CHARS);
    return shown === value ? JSON.stringify(value) : `${JSON.stringify(shown)} (${codePointLength(value)} characters)`;
  }
  const { text, truncated } = boundedJson(value, MAX_VALUE_CHARS);
  return truncated ? `${text}...(truncated)` : text;
}

/**
 * A number JSON cannot carry, as YAML writes it (`.inf`, `-.inf`, `.nan`): JSON.stringify would
 * print `null`, which is not what the manifest says. Only YAML can produce one, and kubectl refuses it.
 */
export function nonFiniteText(n: number): string | undefined {
  if (Number.isNaN(n)) return '.nan';
  if (n === Infinity) return '.inf';
  if (n === -Infinity) return '-.inf';
  return undefined;
}

class BudgetExceeded extends Error {}

/**
 * The JSON text of `value`, cut after `maxChars` without serialising the rest. JSON.stringify of the
 * whole value is not an option: YAML aliases (a "billion laughs" document of a few hundred bytes)
 * expand to gigabytes of JSON, which took `validate` minutes and then crashed it.
 */
export function boundedJson(value: unknown, maxChars: number): { text: string; truncated: boolean } {
  let out = '';
  const emit = (s: string): void => {
    out += s;
    if (out.length > maxChars) throw new BudgetExceeded();
  };
  const walk = (v: unknown, inArray: boolean): void => {
    const json = (v as { toJSON?: unknown } | null)?.toJSON;
    if (typeof json === 'function') v = (json as () => unknown).call(v);
    if (typeof v === 'string') emit(JSON.stringify(v.length > maxChars ? truncateText(v, maxChars + 1) : v));
    else if (typeof v === 'number' && !Number.isFinite(v)) emit(nonFiniteText(v) ?? 'null');
    else if (
      typeof v === 'number' ||
      typeof v === 'boolean' ||
      v === null ||
      v instanceof Number ||
      v instanceof Boolean
    )
      emit(JSON.stringify(v) ?? 'null');
    else if (v instanceof String) walk(String(v), inArray);
    else if (typeof v === 'bigint') emit(String(v));
    else if (typeof v !== 'object')
      emit(inArray ? 'null' : '<nil>'); // undefined, functions, symbols
    else if (Array.isArray(v)) {
      emit('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) emit(',');
        walk(v[i], true);
      }
      emit(']');
    } else {
      emit('{');
      let first = true;
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
        emit(`${first ? '' : ','}${JSON.stringify(k)}:`);
        first = false;
        walk(x, false);
      }
      emit('}');
    }
  };
  try {
    walk(value, false);
    return { text: out, truncated: false };
  } catch (err) {
    if (err instanceof BudgetExceeded) {
      // Never end inside a surrogate pair (an emoji in a key or value).
      const end = /[\ud800-\udbff]/.test(out.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
      return { text: out.slice(0, end), truncated: true };
    }
    // A getter or toJSON that throws: name the type rather than call String(), which joins arrays in full.
    return { text: Object.prototype.toString.call(value), truncated: false };
  }
}

/** The units length rules are stated in: characters and code points are the same count (runes). */
export type LengthUnit = 'characters' | 'code points' | 'UTF-8 bytes';

export function lengthIn(s: string, unit: LengthUnit): number {
  return unit === 'UTF-8 bytes' ? Buffer.byteLength(s, 'utf8') : codePointLength(s);
}

const typeWords: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotFound: 'Not found',
  InternalError: 'Internal error',
};

/** One line in the format kubectl prints for apiserver causes: `spec.port: Invalid value: 70000: must be ...`. */
export function formatFieldError(e: FieldError): string {
  const omitValue = e.type === 'FieldValueRequired' || e.type === 'FieldValueForbidden' || e.type === 'InternalError';
  return omitValue
    ? `${e.field}: ${typeWords[e.type]}: ${e.detail}`
    : `${e.field}: ${typeWords[e.type]}: ${renderValue(e.value)}: ${e.detail}`;
}

export const fieldErrors = {
  required: (field: string, detail: string): FieldError => ({
    field,
    type: 'FieldValueRequired',
    value: undefined,
    detail,
  }),
  invalid: (field: string, value: unknown, detail: string): FieldError => ({
    field,
    type: 'FieldValueInvalid',
    value,
    detail,
  }),
  notSupported: (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
    field,
    type: 'FieldValueNotSupported',
    value,
    detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  }),
  forbidden: (field: string, detail: string): FieldError => ({
    field,
    type: 'FieldValueForbidden',
    value: undefined,
    detail,
  }),
  /** `129 characters; at most 128`: the length in the rule's own unit, next to the limit. */
  tooLong: (field: string, value: unknown, max: number, unit: LengthUnit = 'characters'): FieldError => {
    const actual = typeof value === 'string' ? lengthIn(value, unit) : undefined;
    return {
      field,
      type: 'FieldValueTooLong',
      value,
      detail: actual === undefined ? `must have at most ${max} ${unit}` : `${actual} ${unit}; at most ${max}`,
    };
  },
  duplicate: (field: string, value: unknown, detail = 'must be unique'): FieldError => ({
    field,
    type: 'FieldValueDuplicate',
    value,
    detail,
  }),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError => ({
    field,
    type: 'FieldValueTypeInvalid',
    value,
    detail,
  }),
  notFound: (field: string, value: unknown, detail: string): FieldError => ({
    field,
    type: 'FieldValueNotFound',
    value,
    detail,
  }),
  internal: (field: string, detail: string): FieldError => ({ field, type: 'InternalError', value: undefined, detail }),
};

/** A message for InvalidSpec that names every field path, bounded so it fits a condition and an Event. */
export function invalidSpecMessage(errors: readonly FieldError[]): string {
  const shown = errors.slice(0, 5).map(formatFieldError);
  const more = errors.length > shown.length ? ` (and ${errors.length - shown.length} more)` : '';
  return `${shown.join('; ')}${more}; fix the manifest and apply it again`;
}
