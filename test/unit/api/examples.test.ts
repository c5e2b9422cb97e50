import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { formatFieldError } from '../../../src/api/common/field-error.js';
import { checkManifestSet } from '../../../src/api/manifest-set.js';
import { validateObject } from '../../../src/api/validate-object.js';
import { loadExamples } from '../../support/examples.js';

// Gateway API's practice: valid and invalid examples side by side, every one exercised.
const valid = loadExamples('valid');
const invalid = loadExamples('invalid');

describe('examples/valid', () => {
  it('exists for every area', () => {
    for (const area of ['prediction', 'registry', 'pos'])
      expect(
        valid.some((f) => f.path.startsWith(`examples/valid/${area}/`)),
        area,
      ).toBe(true);
  });

  it.each(valid.map((f) => [f.path, f] as const))('%s passes every validator', (_path, file) => {
    expect(file.documents.length).toBeGreaterThan(0);
    for (const doc of file.documents) {
      const verdict = validateObject(doc.object, undefined, defaultValidationOptions);
      expect(verdict.errors.map(formatFieldError), `${verdict.kind} ${verdict.name}`).toEqual([]);
    }
  });
});

describe('examples/valid as one manifest set', () => {
  it('passes validate --strict: no field a version does not have, no dangling reference, no duplicate', () => {
    const docs = valid.flatMap((f) =>
      f.documents.map((d) => ({ file: f.path, document: d.index + 1, object: d.object })),
    );
    const strict = { ...defaultValidationOptions, strict: true };
    expect(
      docs.flatMap((d) =>
        validateObject(d.object, undefined, strict).errors.map((e) => `${d.file}: ${formatFieldError(e)}`),
      ),
    ).toEqual([]);
    expect(checkManifestSet(docs).map((f) => `${f.subject.file}: ${formatFieldError(f.error)}`)).toEqual([]);
  });
});

describe('examples/invalid', () => {
  it('exists for every area', () => {
    for (const area of ['prediction', 'registry', 'pos'])
      expect(
        invalid.some((f) => f.path.startsWith(`examples/invalid/${area}/`)),
        area,
      ).toBe(true);
  });

  it.each(invalid.map((f) => [f.path, f] as const))('%s is refused at its expect-field', (_path, file) => {
    expect(file.rule, 'a "# rule:" header line').toBeDefined();
    expect(file.expectField, 'a "# expect-field:" header line').toBeDefined();
    const verdicts = file.documents
      .map((d) => validateObject(d.object, undefined, defaultValidationOptions))
      .filter((v) => v.outcome !== 'skipped');
    expect(verdicts.length, 'one object of an endpoint-operator kind').toBeGreaterThan(0);
    const fields = verdicts.flatMap((v) => v.errors.map((e) => e.field));
    if (file.cluster === 'accepted' || file.cluster === 'accepted-with-warning') {
      // Refused only by `validate --strict`: without it, a warning names the field and the file passes.
      expect(fields, 'no error without --strict').toEqual([]);
      const set = checkManifestSet(
        file.documents.map((d) => ({ file: file.path, document: d.index + 1, object: d.object })),
      );
      const warned = [...verdicts.flatMap((v) => v.warnings), ...set.map((f) => `${f.error.field}: ${f.error.detail}`)];
      expect(
        warned.some((w) => w.startsWith(`${file.expectField}: `)),
        warned.join('\n'),
      ).toBe(true);
      const strict = file.documents.map((d) =>
        validateObject(d.object, undefined, { ...defaultValidationOptions, strict: true }),
      );
      expect([...strict.flatMap((v) => v.errors.map((e) => e.field)), ...set.map((f) => f.error.field)]).toContain(
        file.expectField,
      );
    } else {
      expect(fields).toContain(file.expectField);
    }
  });
});
