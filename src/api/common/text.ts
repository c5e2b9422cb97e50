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
