import { describe, expect, it } from 'vitest';
import { DEFAULT_RESERVED_PREFIXES } from '../../../../src/api/common/kind.js';
import { FieldPath } from '../../../../src/api/common/field-path.js';
import {
  ANNOTATIONS_BUDGET,
  annotationKeyProblem,
  effectiveAnnotations,
  isReservedKey,
  validateAnnotations,
} from '../../../../src/api/registry/annotations.js';

const path = FieldPath.root('spec').child('annotations');

describe('annotationKeyProblem', () => {
  it.each([
    'team',
    'a',
    'A.b-c_d9',
    'example.com/team',
    'x.y.example.com/Owner_1',
    `${'a'.repeat(63)}`,
    `${'p'.repeat(63)}.${'q'.repeat(63)}.${'r'.repeat(63)}.${'s'.repeat(61)}/n`,
  ])('accepts %s', (key) => {
    expect(annotationKeyProblem(key)).toBeUndefined();
  });

  it.each([
    ['', /name must not be empty/],
    ['/team', /prefix before '\/' must not be empty/],
    ['example.com/', /name must not be empty/],
    ['a/b/c', /at most one '\/'/],
    ['Example.com/team', /DNS subdomain/],
    ['-example.com/team', /DNS subdomain/],
    ['example..com/team', /DNS subdomain/],
    [`${'p'.repeat(254)}/n`, /^the prefix has 254 characters; at most 253$/],
    [`${'a'.repeat(64)}`, /^the name has 64 characters; at most 63$/],
    [`${'a'.repeat(64)}.example.com/team`, /prefix label "a{16}…a{7}" has 64 characters; a DNS label has at most 63/],
    [`example.${'b'.repeat(64)}/team`, /has 64 characters; a DNS label has at most 63/],
    ['-team', /begin and end with a letter or digit/],
    ['team_', /begin and end/],
    ['te am', /letters, digits/],
    ['tëam', /letters, digits/],
  ])('refuses %s', (key, reason) => {
    expect(annotationKeyProblem(key)).toMatch(reason);
  });
});

describe('isReservedKey', () => {
  it.each([
    'endpoint-operator.dev/x',
    'endpoint-operator.io/x',
    'team.endpoint-operator.dev/x',
    'a.b.endpoint-operator.io/x',
  ])('reserves %s', (key) => {
    expect(isReservedKey(key, DEFAULT_RESERVED_PREFIXES)).toBe(true);
  });

  it.each([
    'x',
    'endpoint-operator.dev',
    'myendpoint-operator.dev/x',
    'endpoint-operator.dev.example.com/x',
    'example.com/endpoint-operator.dev',
  ])('does not reserve %s', (key) => {
    expect(isReservedKey(key, DEFAULT_RESERVED_PREFIXES)).toBe(false);
  });

  it('takes prefixes with or without the trailing slash, and no prefix reserves nothing', () => {
    expect(isReservedKey('corp.example/x', ['corp.example/'])).toBe(true);
    expect(isReservedKey('a.corp.example/x', ['corp.example'])).toBe(true);
    expect(isReservedKey('endpoint-operator.dev/x', [])).toBe(false);
    expect(isReservedKey('x/y', [''])).toBe(false);
  });
});

describe('effectiveAnnotations', () => {
  it('leaves out reserved keys and keeps the rest', () => {
    expect(
      effectiveAnnotations(
        {
          team: 'payments',
          'endpoint-operator.dev/owner': 'x',
          'a.endpoint-operator.io/y': 'z',
          'example.com/tier': 'gold',
        },
        DEFAULT_RESERVED_PREFIXES,
      ),
    ).toEqual({
      team: 'payments',
      'example.com/tier': 'gold',
    });
    expect(effectiveAnnotations(undefined, DEFAULT_RESERVED_PREFIXES)).toEqual({});
  });
});

describe('validateAnnotations', () => {
  const fill = (n: number): Record<string, string> => ({ k: 'v'.repeat(n - 1) });

  it(`accepts exactly ${ANNOTATIONS_BUDGET} characters over keys and values and refuses one more`, () => {
    expect(validateAnnotations(fill(ANNOTATIONS_BUDGET), path, DEFAULT_RESERVED_PREFIXES).errors).toEqual([]);
    const over = validateAnnotations(fill(ANNOTATIONS_BUDGET + 1), path, DEFAULT_RESERVED_PREFIXES).errors;
    expect(over).toEqual([
      expect.objectContaining({ field: 'spec.annotations', type: 'FieldValueTooLong', value: '513 characters' }),
    ]);
    expect(over[0]?.detail).toMatch(/at most 512 characters in total.*remove 1/);
  });

  it('counts code points, so 512 emoji characters fit', () => {
    expect(validateAnnotations({ k: '😀'.repeat(511) }, path, DEFAULT_RESERVED_PREFIXES).errors).toEqual([]);
    expect(validateAnnotations({ k: '😀'.repeat(512) }, path, DEFAULT_RESERVED_PREFIXES).errors).toHaveLength(1);
  });

  it('counts keys and values across entries', () => {
    const entries = Object.fromEntries(
      Array.from({ length: 64 }, (_, i) => [`k${String(i).padStart(2, '0')}`, 'vvvvv']),
    );
    // 64 × (3 + 5) = 512
    expect(validateAnnotations(entries, path, DEFAULT_RESERVED_PREFIXES).errors).toEqual([]);
    expect(validateAnnotations({ ...entries, z: '' }, path, DEFAULT_RESERVED_PREFIXES).errors).toHaveLength(1);
  });

  it('leaves reserved keys out of the budget and names each in a warning', () => {
    const result = validateAnnotations(
      {
        ...fill(ANNOTATIONS_BUDGET),
        'endpoint-operator.dev/notes': 'x'.repeat(4000),
        'ci.endpoint-operator.io/run': '42',
      },
      path,
      DEFAULT_RESERVED_PREFIXES,
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings[0]).toMatch(
      /^spec\.annotations\[endpoint-operator\.dev\/notes\]: .*reserved prefix.*ignored/,
    );
    expect(result.warnings[1]).toMatch(/^spec\.annotations\[ci\.endpoint-operator\.io\/run\]/);
  });

  it('uses the configured prefixes instead of the defaults', () => {
    const result = validateAnnotations({ 'corp.example/x': 'v'.repeat(600), 'endpoint-operator.dev/y': 'v' }, path, [
      'corp.example',
    ]);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([expect.stringMatching(/^spec\.annotations\[corp\.example\/x\]/)]);
  });

  it('reports a bad key at its map path', () => {
    const result = validateAnnotations(
      { 'Bad/x': '1' },
      FieldPath.root('spec').child('metadata'),
      DEFAULT_RESERVED_PREFIXES,
    );
    expect(result.errors.map((e) => e.field)).toEqual(['spec.metadata[Bad/x]']);
  });

  it('ignores a key under a reserved prefix without judging its syntax (the seed: "not an error: silently ignored"), and warns once', () => {
    const result = validateAnnotations(
      {
        'endpoint-operator.dev/-bad': '1',
        'x.endpoint-operator.io/a/b': '2',
        [`endpoint-operator.dev/${'n'.repeat(600)}`]: '3',
      },
      FieldPath.root('spec').child('metadata'),
      DEFAULT_RESERVED_PREFIXES,
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings).toHaveLength(3);
    expect(result.warnings[0]).toMatch(
      /^spec\.metadata\[endpoint-operator\.dev\/-bad\]: .*reserved prefix.*not validated/,
    );
    expect(result.warnings.every((w) => !/invalid/i.test(w))).toBe(true);
  });

  it('accepts a 63-character prefix label and refuses a 64-character one, in v1 annotations and v1beta1 metadata alike', () => {
    const label63 = `${'a'.repeat(63)}.example.com/team`;
    const label64 = `${'a'.repeat(64)}.example.com/team`;
    for (const field of ['annotations', 'metadata']) {
      const path = FieldPath.root('spec').child(field);
      expect(validateAnnotations({ [label63]: 'x' }, path, DEFAULT_RESERVED_PREFIXES).errors).toEqual([]);
      expect(
        validateAnnotations({ [label64]: 'x' }, path, DEFAULT_RESERVED_PREFIXES).errors.map((e) => e.field),
      ).toEqual([`spec.${field}[${label64}]`]);
    }
  });
});
