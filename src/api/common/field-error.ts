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

/** A short, printable rendering of a bad value (a 1 MB string must not flood a terminal or an event). */
export function renderValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (value === undefined) text = '<nil>';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}...(${text.length} chars)` : text;
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
  required: (field: string, detail: string): FieldError => ({ field, type: 'FieldValueRequired', value: undefined, detail }),
  invalid: (field: string, value: unknown, detail: string): FieldError => ({ field, type: 'FieldValueInvalid', value, detail }),
  notSupported: (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
    field,
    type: 'FieldValueNotSupported',
    value,
    detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  }),
  forbidden: (field: string, detail: string): FieldError => ({ field, type: 'FieldValueForbidden', value: undefined, detail }),
  tooLong: (field: string, value: unknown, max: number, unit = 'characters'): FieldError => ({
    field,
    type: 'FieldValueTooLong',
    value,
    detail: `must have at most ${max} ${unit}`,
  }),
  duplicate: (field: string, value: unknown, detail = 'must be unique'): FieldError => ({ field, type: 'FieldValueDuplicate', value, detail }),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError => ({ field, type: 'FieldValueTypeInvalid', value, detail }),
  notFound: (field: string, value: unknown, detail: string): FieldError => ({ field, type: 'FieldValueNotFound', value, detail }),
  internal: (field: string, detail: string): FieldError => ({ field, type: 'InternalError', value: undefined, detail }),
};
