import { create, toBinary } from '@bufbuild/protobuf';
import { StructSchema, ValueSchema } from '@bufbuild/protobuf/wkt';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { AnswerTooDeepError, valueFromWire, valueToWire } from '../../../../src/gateway/grpc/value-wire.js';

const number = (value: number) => create(ValueSchema, { kind: { case: 'numberValue', value } });

describe('google.protobuf.Value on the wire as JSON values', () => {
  it('makes `__proto__` an own key, as JSON.parse does, not the prototype', () => {
    const struct = create(StructSchema, { fields: { ['__proto__']: number(1), a: number(2) } });
    const bytes = toBinary(ValueSchema, create(ValueSchema, { kind: { case: 'structValue', value: struct } }));
    const value = valueFromWire(bytes, 3, 'instances[0]') as Record<string, unknown>;
    expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse('{"__proto__":1,"a":2}')));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('skips fields Value does not have, lets the last kind on the wire win, and refuses a Value with none', () => {
    const bytes = new BinaryWriter()
      .tag(9, WireType.LengthDelimited)
      .string('unknown')
      .tag(3, WireType.LengthDelimited)
      .string('first')
      .tag(4, WireType.Varint)
      .bool(true)
      .finish();
    expect(valueFromWire(bytes, 3, 'instances[0]')).toBe(true);
    expect(() => valueFromWire(new Uint8Array(), 2, 'parameters')).toThrow(
      'Invalid payload received. parameters: a google.protobuf.Value with no kind set',
    );
  });

  it('writes what it reads, and refuses to write an answer nested past the limit', () => {
    const value = { a: [1, 'é', null, true, { b: [] }], c: -1.5 };
    expect(valueFromWire(valueToWire(value, 3), 3, 'predictions[0]')).toEqual(value);
    let deep: unknown = 1;
    for (let i = 0; i < 99; i++) deep = [deep];
    expect(() => valueToWire(deep, 3)).toThrow(AnswerTooDeepError);
    expect(() => valueToWire(deep, 2)).not.toThrow();
  });
});
