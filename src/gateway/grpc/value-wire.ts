/**
 * google.protobuf.Value (and the Struct and ListValue inside it) read from and written to protobuf's wire format
 * as plain JSON values, in one pass: a gRPC call's instances become the same values a REST body's `JSON.parse`
 * gives, and a model server's parsed answer is written as the response's Values, without protobuf-es messages or
 * proto3 JSON text between (wire-messages.ts keeps those fields as bytes for this).
 *
 * The bounds are REST's (../../http/json-guard.ts): nesting deeper than MAX_JSON_DEPTH and numbers JSON cannot
 * carry (±Infinity, NaN) are refused INVALID_ARGUMENT, naming the field path. Depth counts as it would in the
 * REST body of the same call (`{"instances": [ ... ]}` is 2 levels), so both transports accept the same values.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { MAX_JSON_DEPTH } from '../../http/json-guard.js';
import { GoogleApiError } from '../google-errors.js';

/** Value's fields (struct.proto): a oneof `kind`. */
const NULL_VALUE = 1;
const NUMBER_VALUE = 2;
const STRING_VALUE = 3;
const BOOL_VALUE = 4;
const STRUCT_VALUE = 5;
const LIST_VALUE = 6;
/** Struct.fields (map<string, Value>: entries of key 1, value 2) and ListValue.values. */
const REPEATED = 1;
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;

/** Where a value sits (`instances[0].x`), built as the reader goes down and spelled out only for a refusal. */
interface Where {
  readonly parent: Where | string;
  readonly step: string | number;
}

function pathOf(where: Where | string): string {
  if (typeof where === 'string') return where;
  const { parent, step } = where;
  const base = pathOf(parent);
  if (typeof step === 'number') return `${base}[${step}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(step)
    ? `${base}.${step}`
    : `${base}[${JSON.stringify(step.length > 40 ? `${step.slice(0, 40)}…` : step)}]`;
}

/** A request's field that cannot be read as JSON: the caller's INVALID_ARGUMENT. */
function refused(where: Where | string, rule: string): GoogleApiError {
  const path = pathOf(where);
  return new GoogleApiError(
    'INVALID_ARGUMENT',
    `Invalid payload received. ${path.length > 200 ? `${path.slice(0, 200)}…` : path}: ${rule}`,
  );
}

function tooDeep(where: Where | string, depth: number): GoogleApiError {
  return refused(
    where,
    `the value is nested more than ${MAX_JSON_DEPTH} levels deep (at level ${depth}); the limit is ${MAX_JSON_DEPTH} nested lists and structs`,
  );
}

const NO_KIND = 'a google.protobuf.Value with no kind set';

/** An own enumerable property, as JSON.parse makes it (`__proto__` too, which assignment would not create). */
function setKey(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

function readStruct(reader: BinaryReader, end: number, depth: number, where: Where | string): Record<string, unknown> {
  if (depth > MAX_JSON_DEPTH) throw tooDeep(where, depth);
  const object: Record<string, unknown> = {};
  while (reader.pos < end) {
    const [field, wire] = reader.tag();
    if (field !== REPEATED || wire !== WireType.LengthDelimited) {
      reader.skip(wire, field);
      continue;
    }
    const entryEnd = reader.uint32() + reader.pos;
    let key = '';
    let value: unknown = NO_VALUE;
    while (reader.pos < entryEnd) {
      const [f, w] = reader.tag();
      if (f === ENTRY_KEY && w === WireType.LengthDelimited) key = reader.string();
      else if (f === ENTRY_VALUE && w === WireType.LengthDelimited)
        value = readValue(reader, reader.uint32() + reader.pos, depth + 1, { parent: where, step: key });
      else reader.skip(w, f);
    }
    if (value === NO_VALUE) throw refused({ parent: where, step: key }, NO_KIND);
    setKey(object, key, value);
  }
  return object;
}

function readList(reader: BinaryReader, end: number, depth: number, where: Where | string): unknown[] {
  if (depth > MAX_JSON_DEPTH) throw tooDeep(where, depth);
  const list: unknown[] = [];
  while (reader.pos < end) {
    const [field, wire] = reader.tag();
    if (field !== REPEATED || wire !== WireType.LengthDelimited) {
      reader.skip(wire, field);
      continue;
    }
    list.push(readValue(reader, reader.uint32() + reader.pos, depth + 1, { parent: where, step: list.length }));
  }
  return list;
}

/** What a Value with no kind set reads as, before it is refused. */
const NO_VALUE = Symbol('no kind');

/** One Value ending at `end`, at `depth`: the level its list or struct would open at in the call's REST body. */
function readValue(reader: BinaryReader, end: number, depth: number, where: Where | string): unknown {
  let value: unknown = NO_VALUE;
  // A oneof's last field on the wire wins (protobuf's merge rule); fields Value does not have are skipped.
  while (reader.pos < end) {
    const [field, wire] = reader.tag();
    if (field === NULL_VALUE && wire === WireType.Varint) {
      reader.int32();
      value = null;
    } else if (field === NUMBER_VALUE && wire === WireType.Bit64) {
      const n = reader.double();
      if (!Number.isFinite(n))
        throw refused(
          where,
          `${String(n)} is not a number JSON can carry; send a finite number of at most ±1.7976931348623157e308`,
        );
      value = n;
    } else if (field === STRING_VALUE && wire === WireType.LengthDelimited) value = reader.string();
    else if (field === BOOL_VALUE && wire === WireType.Varint) value = reader.bool();
    else if (field === STRUCT_VALUE && wire === WireType.LengthDelimited)
      value = readStruct(reader, reader.uint32() + reader.pos, depth, where);
    else if (field === LIST_VALUE && wire === WireType.LengthDelimited)
      value = readList(reader, reader.uint32() + reader.pos, depth, where);
    else reader.skip(wire, field);
  }
  if (value === NO_VALUE) throw refused(where, NO_KIND);
  return value;
}

/**
 * A Value's bytes (a field a wire message keeps as bytes) as its JSON value. `depth` is the level the value sits
 * at in the call's REST body; `path` names it in a refusal.
 */
export function valueFromWire(bytes: Uint8Array, depth: number, path: string): unknown {
  return readValue(new BinaryReader(bytes), bytes.length, depth, path);
}

/** A list of Values (a repeated field kept as bytes): `instances`, as REST's `JSON.parse` gives it. */
export function valuesFromWire(items: readonly Uint8Array[], depth: number, path: string): unknown[] {
  const list: unknown[] = [];
  for (const bytes of items)
    list.push(readValue(new BinaryReader(bytes), bytes.length, depth, { parent: path, step: list.length }));
  return list;
}

/** A model server's answer nested deeper than a client's protobuf decoder reads (its recursion limit is 100). */
export class AnswerTooDeepError extends Error {}

function writeValue(writer: BinaryWriter, value: unknown, depth: number): void {
  if (value === null || value === undefined) writer.tag(NULL_VALUE, WireType.Varint).int32(0);
  else if (typeof value === 'number') writer.tag(NUMBER_VALUE, WireType.Bit64).double(value);
  else if (typeof value === 'string') writer.tag(STRING_VALUE, WireType.LengthDelimited).string(value);
  else if (typeof value === 'boolean') writer.tag(BOOL_VALUE, WireType.Varint).bool(value);
  else {
    if (depth > MAX_JSON_DEPTH)
      throw new AnswerTooDeepError(`it is nested more than ${MAX_JSON_DEPTH} lists and structs deep`);
    if (Array.isArray(value)) {
      writer.tag(LIST_VALUE, WireType.LengthDelimited).fork();
      for (const item of value) {
        writer.tag(REPEATED, WireType.LengthDelimited).fork();
        writeValue(writer, item, depth + 1);
        writer.join();
      }
    } else {
      writer.tag(STRUCT_VALUE, WireType.LengthDelimited).fork();
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        writer.tag(REPEATED, WireType.LengthDelimited).fork().tag(ENTRY_KEY, WireType.LengthDelimited).string(key);
        writer.tag(ENTRY_VALUE, WireType.LengthDelimited).fork();
        writeValue(writer, item, depth + 1);
        writer.join().join();
      }
    }
    writer.join();
  }
}

/** A JSON value (from JSON.parse) as a Value's bytes; AnswerTooDeepError past the nesting limit. */
export function valueToWire(value: unknown, depth: number): Uint8Array {
  const writer = new BinaryWriter();
  writeValue(writer, value, depth);
  return writer.finish();
}
