import type { z } from 'zod';
import { decode } from '../../common/decode.js';
import { fieldErrors, type FieldError, type ValidationResult } from '../../common/field-error.js';
import { isRecord } from '../../common/text.js';

/**
 * Decodes `obj.spec` with the version's schema and, when it has the right shape, runs the rules a
 * JSON schema cannot carry on the typed value. Total: anything at all in, field errors out.
 */
export function validateSpec<T>(
  obj: unknown,
  schema: z.ZodType<T>,
  semantic: (spec: T) => FieldError[],
): ValidationResult {
  if (!isRecord(obj)) return { errors: [fieldErrors.typeInvalid('', obj, 'must be an object')], warnings: [] };
  if (obj.spec === undefined) return { errors: [fieldErrors.required('spec', 'spec is required')], warnings: [] };
  const { value, errors } = decode(schema, obj.spec, ['spec']);
  if (value === undefined) return { errors, warnings: [] };
  return { errors: semantic(value), warnings: [] };
}
