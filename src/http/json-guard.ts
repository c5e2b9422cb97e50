/**
 * JSON bodies from the network, checked before anything recursive touches them. A body nested 5,000
 * deep parses, but every recursive walk after it (JSON.stringify, a validator, the tensor mapping)
 * then overflows the stack and the caller got a 500. So the raw text is scanned first, iteratively,
 * for its nesting depth (limit 100, protobuf's own recursion limit, which Google's JSON front ends
 * apply too) and for numbers JSON.parse would turn into ±Infinity (`1e400`): JSON.stringify writes
 * those back as `null`, which is not what the caller sent. Both are refused as bad input, naming the
 * limit or the field path.
 */

/** Deepest nesting of arrays and objects accepted in a request body (protobuf's recursion limit). */
export const MAX_JSON_DEPTH = 100;

export class JsonLimitError extends Error {
  override readonly name = 'JsonLimitError';
  constructor(
    readonly rule: 'depth' | 'infinite-number',
    message: string,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

function isNumberByte(b: number): boolean {
  return (b >= DIGIT_0 && b <= DIGIT_9) || b === MINUS || b === 0x2b || b === 0x2e || b === 0x65 || b === 0x45;
}

/**
 * One pass over the bytes (UTF-8 continuation bytes never equal an ASCII delimiter): the deepest
 * nesting, and whether a number token could overflow a double (an exponent, or more than 300
 * characters). Strings are skipped with indexOf. Malformed text is left for JSON.parse to describe.
 */
export function scanJson(body: Buffer, maxDepth = MAX_JSON_DEPTH): { mayOverflow: boolean } {
  let depth = 0;
  let mayOverflow = false;
  const n = body.length;
  let i = 0;
  while (i < n) {
    const b = body[i] as number;
    if (b === QUOTE) {
      let end = body.indexOf(QUOTE, i + 1);
      for (;;) {
        if (end < 0) return { mayOverflow };
        let slashes = 0;
        while (body[end - 1 - slashes] === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = body.indexOf(QUOTE, end + 1);
      }
      i = end + 1;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > maxDepth) {
        throw new JsonLimitError(
          'depth',
          `the JSON body is nested more than ${maxDepth} levels deep (at byte ${i}); the limit is ${maxDepth} nested arrays and objects`,
        );
      }
      i++;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      depth--;
      i++;
    } else if ((b >= DIGIT_0 && b <= DIGIT_9) || b === MINUS) {
      const start = i;
      let exponent = false;
      while (i < n && isNumberByte(body[i] as number)) {
        if (body[i] === 0x65 || body[i] === 0x45) exponent = true;
        i++;
      }
      if (exponent || i - start > 300) mayOverflow = true;
    } else {
      i++;
    }
  }
  return { mayOverflow };
}

/** The path of the first ±Infinity in `value` (`instances[0].x`), walked iteratively; undefined when none. */
export function infiniteNumberPath(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return path === '' ? '(the body)' : path;
    } else if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push([v[k], `${path}[${k}]`]);
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v);
      for (let k = entries.length - 1; k >= 0; k--) {
        const [key, x] = entries[k] as [string, unknown];
        stack.push([
          x,
          /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
            ? `${path === '' ? '' : `${path}.`}${key}`
            : `${path}[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}]`,
        ]);
      }
    }
  }
  return undefined;
}

/** Refuses a parsed body holding ±Infinity, naming where (only called when the scan saw a suspicious number). */
export function checkFiniteNumbers(value: unknown): void {
  const path = infiniteNumberPath(value);
  if (path !== undefined) {
    throw new JsonLimitError(
      'infinite-number',
      `${path}: the number is too large for a 64-bit float (it would become Infinity); send at most ±1.7976931348623157e308`,
    );
  }
}

/**
 * Scans, then parses with `parse` (JSON.parse by default; fastify's secure parser on fastify routes),
 * then refuses ±Infinity. Throws JsonLimitError for the limits and whatever `parse` throws for bad syntax.
 */
export function parseGuardedJson(body: Buffer, parse: (text: string) => unknown = JSON.parse): unknown {
  const { mayOverflow } = scanJson(body);
  const value = parse(body.toString('utf8'));
  if (mayOverflow) checkFiniteNumbers(value);
  return value;
}
