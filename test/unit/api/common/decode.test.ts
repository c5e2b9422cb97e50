import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { decode } from '../../../../src/api/common/decode.js';

describe('decode', () => {
  const schema = z.object({ model: z.string().min(1).max(10), labels: z.record(z.string(), z.string()).optional() });

  it('turns zod issues into Kubernetes field errors, with map keys in brackets', () => {
    const { errors } = decode(schema, { model: 'x'.repeat(11), labels: { 'example.com/team': 5 } }, ['spec']);
    expect(errors.map((e) => [e.field, e.type])).toEqual([
      ['spec.model', 'FieldValueTooLong'],
      ['spec.labels[example.com/team]', 'FieldValueTypeInvalid'],
    ]);
  });

  it('reports a missing required field as Required', () => {
    expect(decode(schema, {}, ['spec']).errors).toEqual([
      expect.objectContaining({ field: 'spec.model', type: 'FieldValueRequired' }),
    ]);
  });

  it('never throws, even where zod itself throws on an exotic value (found by fast-check)', () => {
    const exotic = { length: Object.create(null) as object };
    const { errors } = decode(z.string().max(10), exotic, ['spec', 'model']);
    expect(errors).toEqual([expect.objectContaining({ field: 'spec.model', type: 'FieldValueTypeInvalid' })]);
  });
});
