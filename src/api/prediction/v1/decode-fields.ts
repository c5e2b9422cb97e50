import type { z } from 'zod';
import { decode } from '../../common/decode.js';
import { fieldErrors, type FieldError } from '../../common/field-error.js';
import { isRecord } from '../../common/text.js';

/**
 * Decodes an object field by field, so one bad field does not hide the others: the caller gets
 * every field that decoded (to check the semantic rules on) and every error, the way Kubernetes
 * validation accumulates a whole ErrorList instead of stopping at the first problem.
 * Fields named in `handledByCaller` are left out (the caller checks them on the raw input).
 */
export function decodeFields<Shape extends z.core.$ZodLooseShape>(
  schema: z.ZodObject<Shape>,
  input: unknown,
  root: readonly string[],
  handledByCaller: readonly (keyof Shape & string)[] = [],
): { value: Partial<z.output<z.ZodObject<Shape>>>; raw: Record<string, unknown>; errors: FieldError[] } {
  const path = root.join('.');
  if (input === undefined || input === null)
    return { value: {}, raw: {}, errors: [fieldErrors.required(path, `${path} is required`)] };
  if (!isRecord(input))
    return { value: {}, raw: {}, errors: [fieldErrors.typeInvalid(path, input, 'must be an object')] };
  const value: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  const shape = schema.shape as Record<string, z.ZodType>;
  for (const [name, fieldSchema] of Object.entries(shape)) {
    if ((handledByCaller as readonly string[]).includes(name)) continue;
    // The apiserver prunes nulls of non-nullable fields before validation, so null means absent.
    const fieldInput = input[name] === null ? undefined : input[name];
    const decoded = decode(fieldSchema, fieldInput, [...root, name]);
    if (decoded.errors.length > 0) errors.push(...decoded.errors);
    else if (decoded.value !== undefined) value[name] = decoded.value;
  }
  return { value: value as Partial<z.output<z.ZodObject<Shape>>>, raw: input, errors };
}
