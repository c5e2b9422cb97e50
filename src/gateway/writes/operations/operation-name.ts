/**
 * Long-running operations are derived, never stored: an operation's name says what to watch, and its state is
 * computed from the object each time it is read (so it survives a gateway restart and any replica answers it,
 * as `kubectl wait` reads conditions rather than a job store). The name is Google's shape,
 * `{resource}/operations/{opId}`, where the resource is the model or endpoint the write named and the opId is
 * one URL-safe segment (base64url of a small JSON): the verb, the object watched when it is not the resource
 * itself, the generation the write produced (or the uid a delete removed), the caller's field manager, and
 * verb-specific values (the version id an upload created).
 */
import { isRecord } from '../../../api/common/kube-object.js';
import { GoogleApiError } from '../../google-errors.js';

export interface OperationRef {
  /** `projects/{p}/locations/{l}/models/{m}` or `.../endpoints/{e}`. */
  readonly resource: string;
  readonly verb: string;
  /** The object watched, when it is not the resource's own (DeployModel: the DeployedModel's metadata.name). */
  readonly object?: string;
  /** metadata.generation the write produced. */
  readonly generation?: number;
  /** metadata.uid of the object a delete removed. */
  readonly uid?: string;
  /** The writer's field manager (its managedFields time is the operation's createTime). */
  readonly manager?: string;
  /** Verb-specific values (string → string). */
  readonly extra?: Readonly<Record<string, string>>;
}

interface Encoded {
  v: string;
  o?: string;
  g?: number;
  u?: string;
  m?: string;
  x?: Record<string, string>;
}

const RESOURCE = /^projects\/[^/]+\/locations\/[^/]+\/(models|endpoints)\/[^/]+$/;
const OPERATION = /^(projects\/[^/]+\/locations\/[^/]+\/(?:models|endpoints)\/[^/]+)\/operations\/([A-Za-z0-9_-]+)$/;

export function operationName(ref: OperationRef): string {
  if (!RESOURCE.test(ref.resource)) throw new Error(`not an operation's resource: ${ref.resource}`);
  const e: Encoded = { v: ref.verb };
  if (ref.object !== undefined) e.o = ref.object;
  if (ref.generation !== undefined) e.g = ref.generation;
  if (ref.uid !== undefined) e.u = ref.uid;
  if (ref.manager !== undefined) e.m = ref.manager;
  if (ref.extra !== undefined && Object.keys(ref.extra).length > 0) e.x = { ...ref.extra };
  return `${ref.resource}/operations/${Buffer.from(JSON.stringify(e)).toString('base64url')}`;
}

function invalid(name: string): GoogleApiError {
  return new GoogleApiError(
    'INVALID_ARGUMENT',
    `name: ${JSON.stringify(name.slice(0, 256))} is not an operation this API issued; it must be {model or endpoint resource name}/operations/{id} as a write's Operation.name gave it`,
  );
}

function isStringMap(v: unknown): v is Record<string, string> {
  return isRecord(v) && Object.values(v).every((x) => typeof x === 'string');
}

/** The reference an operation name holds; INVALID_ARGUMENT naming `name` when it is not one. */
export function parseOperationName(name: string): OperationRef {
  const m = OPERATION.exec(name);
  if (m === null) throw invalid(name);
  let e: unknown;
  try {
    e = JSON.parse(Buffer.from(m[2] ?? '', 'base64url').toString('utf8'));
  } catch {
    throw invalid(name);
  }
  if (
    !isRecord(e) ||
    typeof e.v !== 'string' ||
    (e.o !== undefined && typeof e.o !== 'string') ||
    (e.g !== undefined && (typeof e.g !== 'number' || !Number.isSafeInteger(e.g))) ||
    (e.u !== undefined && typeof e.u !== 'string') ||
    (e.m !== undefined && typeof e.m !== 'string') ||
    (e.x !== undefined && !isStringMap(e.x))
  )
    throw invalid(name);
  return {
    resource: m[1] ?? '',
    verb: e.v,
    ...(e.o !== undefined ? { object: e.o } : {}),
    ...(e.g !== undefined ? { generation: e.g } : {}),
    ...(e.u !== undefined ? { uid: e.u } : {}),
    ...(e.m !== undefined ? { manager: e.m } : {}),
    ...(e.x !== undefined ? { extra: e.x } : {}),
  };
}

/** The parts of an operation's resource name. */
export function resourceParts(resource: string): {
  project: string;
  location: string;
  collection: 'models' | 'endpoints';
  id: string;
} {
  const [, project = '', , location = '', collection = '', id = ''] = resource.split('/');
  return { project, location, collection: collection === 'models' ? 'models' : 'endpoints', id };
}

/**
 * The object's latest API write, for ListOperations: the verb (and what it watched) of the write, stamped by the
 * write itself. Its generation is not known before the write, so it is not stamped: an annotation change does not
 * move a custom resource's generation, and the listed operation is judged at the object's generation now.
 */
export const LAST_OPERATION_ANNOTATION = 'endpoint-operator.dev/last-operation';

export type OperationStamp = Pick<OperationRef, 'verb' | 'object' | 'extra'>;

export function operationStamp(stamp: OperationStamp): string {
  const e: Encoded = { v: stamp.verb };
  if (stamp.object !== undefined) e.o = stamp.object;
  if (stamp.extra !== undefined && Object.keys(stamp.extra).length > 0) e.x = { ...stamp.extra };
  return Buffer.from(JSON.stringify(e)).toString('base64url');
}

/** The stamp an object carries, read back as an operation at `generation` by `manager`; undefined when none or unreadable. */
export function stampedOperation(
  resource: string,
  stamp: string | undefined,
  generation: number | undefined,
  manager: string | undefined,
): OperationRef | undefined {
  if (stamp === undefined || !/^[A-Za-z0-9_-]+$/.test(stamp)) return undefined;
  try {
    const ref = parseOperationName(`${resource}/operations/${stamp}`);
    return {
      ...ref,
      ...(generation !== undefined ? { generation } : {}),
      ...(manager !== undefined ? { manager } : {}),
    };
  } catch {
    return undefined;
  }
}
