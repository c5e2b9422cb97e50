/**
 * The answer to a body that fails its route's schema. fastify-type-provider-zod validates it and hands the error
 * handler zod's issues; they are written here as the field errors of the rest of the project (decode.ts: the field
 * path, the bad value and the rule), named in the detail and listed in `errors`, so a client sees which field broke
 * which rule. decode() parses the body once more for that: only on a refusal, and it gives the bad values zod's issues
 * leave out.
 */
import type { z } from 'zod';
import { decode } from '../api/common/decode.js';
import { formatFieldError } from '../api/common/field-error.js';
import { SignInProblem } from './problems.js';

export function invalidBodyProblem(schema: unknown, body: unknown): SignInProblem {
  const { errors } = decode(schema as z.ZodType, body ?? undefined);
  return new SignInProblem(
    'invalidRequest',
    errors.map((e) => formatFieldError({ ...e, value: redactValue(e.field, e.value) })).join('; ') ||
      'a JSON object body is required',
    { fieldErrors: errors },
  );
}

/** Error messages name the field but never echo a password or token back (nor a whole body, which may hold one). */
function redactValue(field: string, value: unknown): unknown {
  return field === '' || /password|token/i.test(field) ? '[REDACTED]' : value;
}
