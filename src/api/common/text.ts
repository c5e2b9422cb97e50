/** Length in Unicode code points, which is how Kubernetes (utf8.RuneCountInString) and the seed count characters. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `s` cut to at most `max` code points (never inside a surrogate pair), keeping its start and its
 * end around an ellipsis: two long keys that differ only at the end (`…/team-a`, `…/team-b`) stay
 * told apart in a message.
 */
export function truncateText(s: string, max: number): string {
  // Cheap exit: UTF-16 length is an upper bound of the code point count.
  if (s.length <= max) return s;
  const points = Array.from(s);
  if (points.length <= max) return s;
  const keep = Math.max(max - 1, 2);
  const head = Math.ceil((keep * 2) / 3);
  return `${points.slice(0, head).join('')}…${points.slice(points.length - (keep - head)).join('')}`;
}

/** The longest map key written into a field path (`spec.labels[...]`); a megabyte key must not make a megabyte message. */
export const MAX_KEY_IN_PATH = 100;

/** A map key as it appears in a field path. */
export function keyInPath(key: string): string {
  return truncateText(key, MAX_KEY_IN_PATH);
}

/**
 * Whether `s` is Unicode text: a lone UTF-16 surrogate (from a `"\ud800"` escape) is not, and the
 * apiserver's JSON decoder would silently replace it with U+FFFD. (String.prototype.isWellFormed is
 * ES2024, in Node since 20; the project's TypeScript lib is ES2023.)
 */
export function isWellFormedText(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

// C0 and C1 controls and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from a manifest (a name, a map key in a field path) with control characters escaped, so that one
 * report line stays one line: a name holding "\nKind ns/other: ok" must not forge a line of the report.
 */
export function printable(text: string): string {
  return text
    .replace(CONTROL_CHARACTERS, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/** A lone UTF-16 surrogate cannot be written as UTF-8: escape it rather than print U+FFFD. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The longest piece of a caller's text (an id, a path segment) quoted inside an error message. */
export const MAX_USER_TEXT_IN_MESSAGE = 120;

/**
 * A caller's text as an error message quotes it: cut to a bounded length (head and tail kept) and
 * with control characters escaped, so a 16 KB id or a `%00` in a path cannot flood or forge a log line.
 */
export function userTextInMessage(text: string, max = MAX_USER_TEXT_IN_MESSAGE): string {
  return printable(truncateText(text, max));
}
