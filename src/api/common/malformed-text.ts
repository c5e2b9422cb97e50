import type { z } from 'zod';
import { fieldErrors, type FieldError } from './field-error.js';
import { formatPath } from './field-path.js';
import { isRecordAt } from './schema-walk.js';
import { isRecord, isWellFormedText } from './text.js';

/**
 * Strings that are not Unicode text: a lone UTF-16 surrogate, which a JSON or YAML `"\ud800"`
 * escape produces. The text is not UTF-8 (the seed's display_name is "any UTF-8 characters"), and
 * it never reaches a cluster as written: kubectl refuses the escape, and the apiserver's JSON
 * decoder replaces it with U+FFFD. So `validate` refuses it, naming the field, instead of passing
 * a manifest whose stored value would differ from the file.
 *
 * Walks keys and values of `metadata` and `spec`; a YAML alias is walked once.
 */
export function malformedTextErrors(obj: unknown, specSchema: z.ZodType): FieldError[] {
  if (!isRecord(obj)) return [];
  const walk: Walk = { specSchema, errors: [], seen: new WeakSet<object>(), segments: [] };
  for (const top of ['metadata', 'spec'] as const) {
    walk.segments.push(top);
    visit(walk, obj[top], 0);
    walk.segments.pop();
  }
  return walk.errors;
}

/** One walk's state: the path is one stack, copied only when an error is reported (this runs on every manifest). */
interface Walk {
  readonly specSchema: z.ZodType;
  readonly errors: FieldError[];
  readonly seen: WeakSet<object>;
  readonly segments: PropertyKey[];
}

function visit(walk: Walk, value: unknown, depth: number): void {
  if (typeof value === 'string') {
    if (!isWellFormedText(value)) report(walk, value, 'the value');
    return;
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || walk.seen.has(value)) return;
  walk.seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      walk.segments.push(i);
      visit(walk, value[i], depth + 1);
      walk.segments.pop();
    }
    return;
  }
  for (const key of Object.keys(value)) {
    walk.segments.push(key);
    if (!isWellFormedText(key)) report(walk, key, 'the key');
    visit(walk, (value as Record<string, unknown>)[key], depth + 1);
    walk.segments.pop();
  }
}

function report(walk: Walk, value: string, what: string): void {
  if (walk.errors.length >= MAX_ERRORS) return;
  const isMapKey = (segments: readonly PropertyKey[]): boolean => {
    if (segments[0] === 'metadata')
      return segments.length === 2 && (segments[1] === 'labels' || segments[1] === 'annotations');
    return segments[0] === 'spec' && isRecordAt(walk.specSchema, segments.slice(1));
  };
  walk.errors.push(
    fieldErrors.invalid(
      formatPath(walk.segments, isMapKey),
      value,
      `${what} is not Unicode text: ${describe(value)}; write the character itself, or a valid surrogate pair`,
    ),
  );
}

const MAX_DEPTH = 64;
const MAX_ERRORS = 100;

/** Where the first lone surrogate is, in words. */
function describe(s: string): string {
  let position = 0;
  for (const c of s) {
    position++;
    const code = c.charCodeAt(0);
    if (c.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      const kind = code <= 0xdbff ? 'a high surrogate without its low half' : 'a low surrogate without its high half';
      return `it holds a lone UTF-16 surrogate (\\u${code.toString(16)}, ${kind}) at character ${position}, which the apiserver would store as U+FFFD`;
    }
  }
  return 'it holds a lone UTF-16 surrogate';
}
