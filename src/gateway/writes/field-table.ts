/**
 * From the object's field paths to the request's: a write method declares one small table (object path →
 * request path, in Google's snake_case), and every rule the validators or the apiserver enforce is answered as
 * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field the caller sent
 * (`deployed_model.dedicated_resources.min_replica_count`), not the object's path.
 */
import { isRecord } from '../../api/common/kube-object.js';
import { renderValue, type FieldError } from '../../api/common/field-error.js';
import { GoogleApiError, type FieldViolation } from '../google-errors.js';

/**
 * Object path prefix → request path. In a prefix `[*]` stands for any one index or key (`spec.versions[*].artifactUri`);
 * the rest of the object's path after the longest matching prefix is appended, its camelCase words in snake_case.
 */
export type FieldTable = Readonly<Record<string, string>>;

function prefixPattern(prefix: string): RegExp {
  const escaped = prefix.replace(/[.+?^${}()|\\]/g, '\\$&').replace(/\[\*\]/g, '\\[[^\\]]*\\]');
  return new RegExp(`^${escaped}(?=$|[.[])`);
}

export function snakeCase(path: string): string {
  return path.replace(
    /(^|\.)([A-Za-z0-9]+)/g,
    (_, dot: string, word: string) => `${dot}${word.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
  );
}

/** The request's path for an object path; the object path itself (snake_case) when the table has no entry. */
export function requestField(table: FieldTable, objectPath: string): string {
  const path = objectPath.replace(/^\./, '');
  let best: { length: number; request: string; rest: string } | undefined;
  for (const [prefix, request] of Object.entries(table)) {
    const m = prefixPattern(prefix).exec(path);
    if (m === null || (best !== undefined && m[0].length <= best.length)) continue;
    best = { length: m[0].length, request, rest: path.slice(m[0].length) };
  }
  return best === undefined ? snakeCase(path) : `${best.request}${snakeCase(best.rest)}`;
}

/** The project's validators' errors as the request's violations. */
export function violationsOfFieldErrors(table: FieldTable, errors: readonly FieldError[]): FieldViolation[] {
  return errors.map((e) => ({
    field: requestField(table, e.field),
    description: `${e.value === undefined ? '' : `invalid value ${renderValue(e.value)}: `}${e.detail}`,
  }));
}

/** The apiserver's 422 (or 400) Status causes as the request's violations; empty when it carries none. */
export function violationsOfStatus(table: FieldTable, status: unknown): FieldViolation[] {
  if (!isRecord(status) || !isRecord(status.details) || !Array.isArray(status.details.causes)) return [];
  const out: FieldViolation[] = [];
  for (const cause of status.details.causes as unknown[]) {
    if (!isRecord(cause)) continue;
    const field = typeof cause.field === 'string' ? cause.field : '';
    const message = typeof cause.message === 'string' ? cause.message : String(cause.reason ?? 'invalid');
    out.push({ field: field === '' ? '' : requestField(table, field), description: message });
  }
  return out;
}

/** INVALID_ARGUMENT for validator errors, or undefined when there are none. */
export function badRequestOf(table: FieldTable, errors: readonly FieldError[]): GoogleApiError | undefined {
  return errors.length === 0 ? undefined : GoogleApiError.badRequest(violationsOfFieldErrors(table, errors));
}
