import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { formatFieldError } from '../../../src/api/common/field-error.js';
import { validateObject } from '../../../src/api/validate-object.js';
import { loadExamples } from '../../support/examples.js';

// Gateway API's practice: valid and invalid examples side by side, every one exercised.
const valid = loadExamples('valid');
const invalid = loadExamples('invalid');

describe('examples/valid', () => {
  it('exists for every area', () => {
    for (const area of ['prediction', 'registry', 'pos']) expect(valid.some((f) => f.path.startsWith(`examples/valid/${area}/`)), area).toBe(true);
  });

  it.each(valid.map((f) => [f.path, f] as const))('%s passes every validator', (_path, file) => {
    expect(file.documents.length).toBeGreaterThan(0);
    for (const doc of file.documents) {
      const verdict = validateObject(doc.object, undefined, defaultValidationOptions);
      expect(verdict.errors.map(formatFieldError), `${verdict.kind} ${verdict.name}`).toEqual([]);
    }
  });
});

describe('examples/invalid', () => {
  it('exists for every area', () => {
    for (const area of ['prediction', 'registry', 'pos']) expect(invalid.some((f) => f.path.startsWith(`examples/invalid/${area}/`)), area).toBe(true);
  });

  it.each(invalid.map((f) => [f.path, f] as const))('%s is refused at its expect-field', (_path, file) => {
    expect(file.rule, 'a "# rule:" header line').toBeDefined();
    expect(file.expectField, 'a "# expect-field:" header line').toBeDefined();
    const verdicts = file.documents.map((d) => validateObject(d.object, undefined, defaultValidationOptions)).filter((v) => v.outcome !== 'skipped');
    expect(verdicts.length, 'one object of an endpoint-operator kind').toBeGreaterThan(0);
    const fields = verdicts.flatMap((v) => v.errors.map((e) => e.field));
    expect(fields).toContain(file.expectField);
  });
});
