/**
 * Vertex's `instances` ↔ Open Inference Protocol V2 tensors (documented in the README, "The V2 tensor
 * mapping"). Pure functions; a request that cannot be mapped is an INVALID_ARGUMENT naming the instance.
 *
 * Request (instances → inputs):
 * - every instance a JSON object: one input tensor per key (the keys of the first instance; every
 *   instance must have the same keys), shape `[n, ...shape of the value]`;
 * - otherwise (numbers, strings, booleans or nested arrays): one input tensor named `instances`,
 *   shape `[n, ...shape of one instance]`.
 * Datatype per tensor: all booleans → BOOL; all integers → INT64; all numbers → FP64; all strings →
 * BYTES (UTF-8 text in the JSON data). Mixed kinds or ragged arrays are refused. Data is flattened in
 * row-major order. `parameters` is passed as the request's `parameters`.
 *
 * Response (outputs → predictions), for `n` instances:
 * - each output's data is split along its first dimension into `n` rows, each row shaped `shape[1:]`
 *   (a scalar when the output is `[n]`);
 * - one output: `predictions[i]` is its row i; several outputs: `predictions[i]` is an object
 *   `{outputName: row i}`.
 * An output whose first dimension is not `n` is refused as a bad answer of the model server.
 */
import { MAX_JSON_DEPTH } from '../../http/json-guard.js';

export type Datatype = 'BOOL' | 'INT64' | 'FP64' | 'BYTES';

export interface InferTensor {
  name: string;
  shape: number[];
  datatype: string;
  data: unknown[];
  parameters?: Record<string, unknown>;
}

export interface InferRequest {
  id?: string;
  inputs: InferTensor[];
  parameters?: Record<string, unknown>;
}

export interface InferResponse {
  model_name?: string;
  model_version?: string;
  id?: string;
  outputs: InferTensor[];
}

/** A mapping failure; the caller turns it into INVALID_ARGUMENT (request) or a 502 (response). */
export class TensorMappingError extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Shape of a nested array (rectangular) and its scalars, row-major. The recursion is bounded by the
 * JSON nesting limit (a tensor of more than MAX_JSON_DEPTH dimensions is refused), whatever the caller checked.
 */
function flatten(value: unknown, where: string, depth = 0): { shape: number[]; data: unknown[] } {
  if (!Array.isArray(value)) return { shape: [], data: [value] };
  if (depth >= MAX_JSON_DEPTH)
    throw new TensorMappingError(
      `${where.length > 80 ? `${where.slice(0, 80)}…` : where} nests arrays more than ${MAX_JSON_DEPTH} deep: a tensor has at most ${MAX_JSON_DEPTH} dimensions`,
    );
  if (value.length === 0) return { shape: [0], data: [] };
  const parts = value.map((v, i) => flatten(v, `${where}[${i}]`, depth + 1));
  const inner = parts[0]?.shape ?? [];
  for (const [i, p] of parts.entries()) {
    if (p.shape.length !== inner.length || p.shape.some((d, k) => d !== inner[k])) {
      throw new TensorMappingError(
        `${where}[${i}] has shape [${p.shape.join(',')}], expected [${inner.join(',')}] like ${where}[0]: tensors must be rectangular`,
      );
    }
  }
  return { shape: [value.length, ...inner], data: parts.flatMap((p) => p.data) };
}

function datatypeOf(data: readonly unknown[], where: string): Datatype {
  let kind: Datatype | undefined;
  for (const v of data) {
    let k: Datatype;
    if (typeof v === 'boolean') k = 'BOOL';
    else if (typeof v === 'number' && Number.isFinite(v)) k = Number.isInteger(v) ? 'INT64' : 'FP64';
    else if (typeof v === 'string') k = 'BYTES';
    else
      throw new TensorMappingError(
        `${where} holds ${v === null ? 'null' : typeof v}: tensor elements must be numbers, strings or booleans`,
      );
    if (kind === undefined) kind = k;
    else if (kind !== k) {
      if ((kind === 'INT64' && k === 'FP64') || (kind === 'FP64' && k === 'INT64')) kind = 'FP64';
      else throw new TensorMappingError(`${where} mixes ${kind} and ${k} elements`);
    }
  }
  return kind ?? 'FP64';
}

function tensor(name: string, rows: readonly unknown[], where: string): InferTensor {
  const { shape, data } = flatten(rows, where);
  return { name, shape, datatype: datatypeOf(data, where), data };
}

/** Vertex `{instances, parameters}` → an OIP V2 inference request. */
export function instancesToInferRequest(instances: readonly unknown[], parameters?: unknown): InferRequest {
  if (instances.length === 0) throw new TensorMappingError('instances is empty');
  const first = instances[0];
  let inputs: InferTensor[];
  if (isObject(first)) {
    const keys = Object.keys(first);
    for (const [i, instance] of instances.entries()) {
      if (!isObject(instance)) throw new TensorMappingError(`instances[${i}] is not an object like instances[0]`);
      const got = Object.keys(instance);
      if (got.length !== keys.length || got.some((k) => !(k in first))) {
        throw new TensorMappingError(
          `instances[${i}] has keys [${got.join(', ')}], expected [${keys.join(', ')}] like instances[0]`,
        );
      }
    }
    inputs = keys.map((key) =>
      tensor(
        key,
        instances.map((inst) => (inst as Record<string, unknown>)[key]),
        `instances[*].${key}`,
      ),
    );
  } else {
    inputs = [tensor('instances', instances, 'instances')];
  }
  const request: InferRequest = { inputs };
  if (isObject(parameters)) request.parameters = parameters;
  return request;
}

/** Row `i` of a tensor whose first dimension is `n`, shaped `shape[1:]`. */
function row(t: InferTensor, i: number): unknown {
  const inner = t.shape.slice(1);
  const size = inner.reduce((a, b) => a * b, 1);
  const flat = t.data.slice(i * size, (i + 1) * size);
  return inner.length === 0 ? flat[0] : unflatten(flat, inner);
}

function unflatten(flat: readonly unknown[], shape: readonly number[]): unknown[] {
  const [dim, ...rest] = shape;
  if (dim === undefined) return [...flat];
  if (rest.length === 0) return flat.slice(0, dim);
  const size = rest.reduce((a, b) => a * b, 1);
  const out: unknown[] = [];
  for (let k = 0; k < dim; k++) out.push(unflatten(flat.slice(k * size, (k + 1) * size), rest));
  return out;
}

export function isInferTensor(v: unknown): v is InferTensor {
  return (
    isObject(v) &&
    typeof v.name === 'string' &&
    Array.isArray(v.shape) &&
    v.shape.every((d) => Number.isInteger(d) && d >= 0) &&
    Array.isArray(v.data)
  );
}

/** An OIP V2 inference response's outputs → Vertex `predictions` for `n` instances. */
export function outputsToPredictions(outputs: readonly InferTensor[], n: number): unknown[] {
  if (outputs.length === 0) throw new TensorMappingError('the inference response has no outputs');
  for (const t of outputs) {
    if (t.shape[0] !== n)
      throw new TensorMappingError(
        `output "${t.name}" has shape [${t.shape.join(',')}]; its first dimension must be the number of instances (${n})`,
      );
    const size = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== size)
      throw new TensorMappingError(`output "${t.name}" has ${t.data.length} elements for shape [${t.shape.join(',')}]`);
  }
  const only = outputs.length === 1 ? outputs[0] : undefined;
  const predictions: unknown[] = [];
  for (let i = 0; i < n; i++) {
    if (only !== undefined) predictions.push(row(only, i));
    else predictions.push(Object.fromEntries(outputs.map((t) => [t.name, row(t, i)])));
  }
  return predictions;
}
