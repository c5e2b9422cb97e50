import { describe, expect, it } from 'vitest';
import {
  infiniteNumberPath,
  JsonLimitError,
  MAX_JSON_DEPTH,
  parseGuardedJson,
  scanJson,
} from '../../../src/http/json-guard.js';
import { userTextInMessage } from '../../../src/api/common/text.js';

const nested = (depth: number, open = '[', close = ']'): string => `${open.repeat(depth)}${close.repeat(depth)}`;

describe('the JSON nesting pre-check', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more, naming the limit, without recursion`, () => {
    expect(parseGuardedJson(Buffer.from(nested(MAX_JSON_DEPTH)))).toBeDefined();
    expect(() => parseGuardedJson(Buffer.from(nested(MAX_JSON_DEPTH + 1)))).toThrow(/nested more than 100 levels deep/);
    // Far past what a recursive parser or stringify survives: still a JsonLimitError, not a RangeError.
    const deep = `{"instances":${nested(200_000)}}`;
    expect(() => scanJson(Buffer.from(deep))).toThrow(JsonLimitError);
    const objects = '{"a":'.repeat(101) + '1' + '}'.repeat(101);
    expect(() => scanJson(Buffer.from(objects))).toThrow(JsonLimitError);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: '['.repeat(500), t: 'a\\"[[[[', u: '\\\\' });
    expect(parseGuardedJson(Buffer.from(text))).toEqual(JSON.parse(text));
    const multiByte = JSON.stringify({ s: 'ação ✓ 🚀 [', n: [1, 2] });
    expect(parseGuardedJson(Buffer.from(multiByte))).toEqual(JSON.parse(multiByte));
  });

  it('leaves malformed JSON to JSON.parse', () => {
    expect(() => parseGuardedJson(Buffer.from('{"a": [1, 2'))).toThrow(SyntaxError);
    expect(() => parseGuardedJson(Buffer.from('"unterminated'))).toThrow(SyntaxError);
  });
});

describe('numbers that overflow a double', () => {
  it('refuses ±Infinity naming its path; large finite numbers pass', () => {
    expect(() => parseGuardedJson(Buffer.from('{"instances":[{"x":[1,1e400]}]}'))).toThrow(
      /^instances\[0\]\.x\[1\]: the number is too large/,
    );
    expect(() => parseGuardedJson(Buffer.from('{"parameters":{"a b":-1E+999}}'))).toThrow(/^parameters\["a b"\]:/);
    expect(() => parseGuardedJson(Buffer.from(`[${'9'.repeat(400)}]`))).toThrow(/^\[0\]:/);
    expect(parseGuardedJson(Buffer.from('{"x":1.7976931348623157e308,"y":1e-400,"z":"1e400"}'))).toEqual({
      x: 1.7976931348623157e308,
      y: 0,
      z: '1e400',
    });
  });

  it('walks iteratively: a wide body is fine', () => {
    const wide = Array.from({ length: 100_000 }, (_, i) => i);
    expect(infiniteNumberPath(wide)).toBeUndefined();
    expect(infiniteNumberPath([...wide, -Infinity])).toBe('[100000]');
  });
});

describe('user text in error messages', () => {
  it('is cut to a bounded length and has control characters escaped', () => {
    expect(userTextInMessage('projects/p/locations/l/endpoints/1')).toBe('projects/p/locations/l/endpoints/1');
    expect(userTextInMessage('a\u0000b\nc\u202e'.replace('\u202e', '\u2028'))).toBe('a\\u0000b\\nc\\u2028');
    const long = userTextInMessage('x'.repeat(16_384));
    expect([...long].length).toBeLessThanOrEqual(120);
    expect(long).toContain('…');
  });
});
