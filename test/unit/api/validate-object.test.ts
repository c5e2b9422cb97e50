import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldErrorType } from '../../../src/api/common/field-error.js';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { findKind } from '../../../src/api/kinds.js';
import { validateObject, type ObjectVerdict } from '../../../src/api/validate-object.js';
import { FIELD_ERROR_TYPES, fieldPathProblem } from '../../support/field-paths.js';
import {
  manifestCaseArbitrary,
  manifestSeeds,
  servedKindKeys,
  type ManifestCase,
} from '../../support/manifest-arbitraries.js';

// Issue 8: 10,000 fuzzed manifests through the validators. Whatever a YAML file or an AdmissionReview holds,
// validation returns (never throws), is deterministic and pure, and every error names a field path that
// exists in the manifest (or is a missing field of it), a known type and a detail.
const NUM_RUNS = 10_000;

/** Per seed kind, how many cases were valid and invalid: the fuzzing must reach both sides of every kind. */
const outcomes = new Map<string, { valid: number; invalid: number }>();

function tally(c: ManifestCase, verdict: ObjectVerdict): void {
  const key = `${c.group}/${c.version} ${c.kind}`;
  const t = outcomes.get(key) ?? { valid: 0, invalid: 0 };
  if (verdict.outcome === 'valid') t.valid++;
  if (verdict.outcome === 'invalid') t.invalid++;
  outcomes.set(key, t);
}

// InternalError is what validateObject reports when a validator threw.
const USER_ERROR_TYPES = new Set<FieldErrorType>(FIELD_ERROR_TYPES.filter((t) => t !== 'InternalError'));

/** A deep copy that keeps what deepStrictEqual compares: prototypes (null ones too), holes, own `__proto__` keys. */
function snapshot(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snapshot); // map keeps holes
  if (typeof value !== 'object' || value === null) return value;
  const copy: object = Object.create(Object.getPrototypeOf(value) as object | null);
  for (const key of Reflect.ownKeys(value)) {
    Object.defineProperty(copy, key, {
      value: snapshot((value as Record<PropertyKey, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

// node:assert rather than expect() inside the property: 10,000 cases × dozens of checks.
function checkVerdict(verdict: ObjectVerdict, object: unknown, oldObject: unknown): void {
  assert.ok(['valid', 'invalid', 'skipped'].includes(verdict.outcome), verdict.outcome);
  assert.equal(
    verdict.errors.length > 0,
    verdict.outcome === 'invalid',
    `outcome ${verdict.outcome} with ${verdict.errors.length} errors`,
  );
  for (const w of verdict.warnings) assert.equal(typeof w, 'string');
  for (const e of verdict.errors) {
    assert.ok(USER_ERROR_TYPES.has(e.type), `${e.type} at ${e.field}: ${e.detail}`);
    assert.ok(typeof e.detail === 'string' && e.detail.trim() !== '', `empty detail at ${e.field}`);
    const problem = fieldPathProblem(e.field, object, oldObject);
    assert.equal(problem, undefined, `${problem}: ${e.type} ${e.detail}`);
    if (e.field === '') assert.equal(e.type, 'FieldValueTypeInvalid', e.detail);
  }
}

describe('fuzzing the validators (fast-check)', { timeout: 120_000 }, () => {
  it('starts from valid manifests of every served kind and version', () => {
    expect(new Set(manifestSeeds.map((s) => `${s.group}/${s.version} ${s.kind}`))).toEqual(new Set(servedKindKeys));
    for (const seed of manifestSeeds)
      expect(
        validateObject(seed.object, undefined, defaultValidationOptions).errors,
        `${seed.kind} ${String(seed.object.metadata)}`,
      ).toEqual([]);
  });

  it('the field-path check itself refuses paths that name nothing', () => {
    const obj = {
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n' },
      spec: { labels: { 'a.b]c': 'x' }, list: [{ shop: 's' }] },
    };
    for (const ok of [
      'spec',
      'metadata.name',
      'metadata.namespace',
      'spec.labels[a.b]c]',
      'spec.list[0].shop',
      'spec.list[0].role',
      'spec.missing.deeper',
    ])
      expect(fieldPathProblem(ok, obj), ok).toBeUndefined();
    for (const bad of [
      '',
      'nonsense',
      'spec.labels[nope]',
      'spec.list[1].shop',
      'spec.list[0][x]',
      'status[0]',
      'spec..x',
      'Spec',
    ])
      expect(fieldPathProblem(bad, obj), bad).toBeDefined();
    expect(fieldPathProblem('', 42)).toBeUndefined();
  });

  it(`validateObject on ${NUM_RUNS} manifests (create and update): total, deterministic, pure, every error on a field path`, () => {
    fc.assert(
      fc.property(manifestCaseArbitrary, (c) => {
        // A structural comparison, not v8.serialize bytes: V8 writes 1 as an int32 or as a double depending on the
        // field's representation in the hidden class, which changes when another object of the same shape stores a
        // double (4.07e-200) and this one is migrated on its next read: equal values, other bytes (seen as a flake).
        const before = snapshot([c.object, c.oldObject]);
        const verdict = validateObject(c.object, c.oldObject, defaultValidationOptions);
        assert.deepStrictEqual([c.object, c.oldObject], before, 'validation changed its input');
        checkVerdict(verdict, c.object, c.oldObject);
        assert.deepStrictEqual(
          validateObject(c.object, c.oldObject, defaultValidationOptions),
          verdict,
          'a second validation gave another verdict',
        );
        tally(c, verdict);

        // What the webhook runs: the seed kind's own validator, whatever the object's header says.
        const own = findKind(`${c.group}/${c.version}`, c.kind);
        assert.ok(own, `${c.group}/${c.version} ${c.kind} is not served`);
        const result = own.version.validate(c.object, c.oldObject, defaultValidationOptions);
        checkVerdict(
          { outcome: result.errors.length > 0 ? 'invalid' : 'valid', errors: result.errors, warnings: result.warnings },
          c.object,
          c.oldObject,
        );
        // validateObject adds the apiserver's metadata checks to that same validator: nothing is lost.
        const o = c.object as { apiVersion?: unknown; kind?: unknown } | null;
        if (typeof o === 'object' && o !== null && o.apiVersion === `${c.group}/${c.version}` && o.kind === c.kind) {
          for (const e of result.errors)
            assert.ok(
              verdict.errors.includes(e) ||
                verdict.errors.some((v) => v.field === e.field && v.type === e.type && v.detail === e.detail),
              `validateObject lost ${e.field}: ${e.detail}`,
            );
          // ...and adds warnings for fields the version does not have (the apiserver prunes them), nothing else.
          assert.deepStrictEqual(verdict.warnings.slice(0, result.warnings.length), result.warnings);
          for (const w of verdict.warnings.slice(result.warnings.length)) assert.match(w, /^.+: unknown field: /s);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('reached valid and invalid manifests of every kind', () => {
    for (const key of servedKindKeys) {
      const t = outcomes.get(key);
      expect(t?.valid, `${key}: ${JSON.stringify(t)}`).toBeGreaterThan(0);
      expect(t?.invalid, `${key}: ${JSON.stringify(t)}`).toBeGreaterThan(0);
    }
    const total = [...outcomes.values()].reduce((n, t) => n + t.valid + t.invalid, 0);
    expect(total).toBeGreaterThanOrEqual(NUM_RUNS * 0.9);
  });
});
