import type { z } from 'zod';
import { fieldErrors, type FieldError } from './field-error.js';
import { formatPath } from './field-path.js';
import { isRecordAt } from './schema-walk.js';

/**
 * Parses `input` with a zod schema and turns every zod issue into a Kubernetes-style
 * FieldError (path, type, bad value, detail). Never throws: a validator built on it can be
 * fed anything a YAML file or an AdmissionReview contains.
 */
export function decode<T>(
  schema: z.ZodType<T>,
  input: unknown,
  root: readonly PropertyKey[] = [],
): { value?: T; errors: FieldError[] } {
  let result;
  try {
    result = schema.safeParse(input);
  } catch (err) {
    // zod's length checks read `input.length` even after the type check failed, and throw on
    // exotic values (an object whose `length` has no prototype); a validator must stay total.
    return {
      errors: [
        fieldErrors.typeInvalid(
          formatPath(root),
          input,
          `has a value of the wrong type that cannot be read (${(err as Error).message})`,
        ),
      ],
    };
  }
  if (result.success) return { value: result.data, errors: [] };
  const errors = result.error.issues.map((issue) => issueToFieldError(schema, input, issue, root));
  return { errors };
}

type Issue = z.core.$ZodIssue;

function issueToFieldError(schema: z.ZodType, input: unknown, issue: Issue, root: readonly PropertyKey[]): FieldError {
  const segments = issue.path;
  const field = formatPath(
    [...root, ...segments],
    (prefix) => prefix.length >= root.length && isRecordAt(schema, prefix.slice(root.length)),
  );
  const value = valueAt(input, segments);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined)
        return fieldErrors.required(
          field,
          issue.message === 'Required' || issue.message.startsWith('Invalid input')
            ? `${field || 'value'} is required`
            : issue.message,
        );
      if (typeof value === 'number' && !Number.isFinite(value)) {
        return fieldErrors.typeInvalid(
          field,
          value,
          'must be a finite number: JSON has no .inf or .nan, so kubectl cannot send this manifest',
        );
      }
      return fieldErrors.typeInvalid(field, value, `must be of type ${issue.expected}`);
    case 'too_big':
      if (issue.origin === 'string') return fieldErrors.tooLong(field, value, Number(issue.maximum));
      if (issue.origin === 'array' || issue.origin === 'set' || issue.origin === 'map')
        return { field, type: 'FieldValueTooMany', value, detail: `must have at most ${String(issue.maximum)} items` };
      return fieldErrors.invalid(
        field,
        value,
        issue.message || `must be less than or equal to ${String(issue.maximum)}`,
      );
    case 'invalid_value':
      return fieldErrors.notSupported(
        field,
        value,
        issue.values.map((v) => String(v)),
      );
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
