import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMergePatch, deepEqual } from '../../../src/runtime/json-diff.js';

/** RFC 7386 MergePatch, the reference algorithm, to check the patches we create. */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

describe('status diff', () => {
  it('ignores key order, not array order', () => {
    expect(deepEqual({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 })).toBe(true);
    expect(deepEqual({ c: [1, 2] }, { c: [2, 1] })).toBe(false);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual(1, '1')).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
  });

  it('createMergePatch returns undefined when nothing changed and nulls for removed keys', () => {
    expect(createMergePatch({ a: 1, b: { c: 2 } }, { b: { c: 2 }, a: 1 })).toBeUndefined();
    expect(createMergePatch({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 2 } })).toEqual({ b: { d: null } });
    expect(createMergePatch({ list: [1, 2] }, { list: [1] })).toEqual({ list: [1] });
    expect(createMergePatch(undefined, { a: 1 })).toEqual({ a: 1 });
  });

  it('applying the created patch always yields the target (property)', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.integer(),
        fc.string(),
        fc.boolean(),
        fc.array(tie('value'), { maxLength: 3 }),
        tie('object'),
      ),
      object: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('value'), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(json.object, json.object, (from, to) => {
        const patch = createMergePatch(from, to);
        const result = patch === undefined ? from : applyMergePatch(from, patch);
        expect(deepEqual(result, to)).toBe(true);
      }),
    );
  });
});
