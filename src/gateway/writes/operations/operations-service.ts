/**
 * google.longrunning.Operations over the derived operations (operation-name.ts): every answer is computed from
 * the objects now, so any replica answers and a restart loses nothing.
 *
 *   GetOperation     GET    /v1/{name=projects/*\/locations/*\/{models|endpoints}/*\/operations/*}
 *   ListOperations   GET    /v1/{name=projects/*\/locations/*\/{models|endpoints}/*}/operations   (the latest API write)
 *   WaitOperation    POST   /v1/{name=…/operations/*}:wait   (until done or `timeout`: default 60 s, at most 10 min)
 *   DeleteOperation  DELETE /v1/{name=…/operations/*}        (Empty: nothing is stored, so nothing is deleted)
 *   CancelOperation  POST   /v1/{name=…/operations/*}:cancel (FAILED_PRECONDITION: change or delete the object instead)
 *
 * (each also under `/ui/`, which the Node clients' REST fallback names first). Reading an operation is reading its
 * resource: `get` on the Model (or PredictionEndpoint) it names, as the caller.
 */
import type { ResourceRef } from '../../../api/common/kube-object.js';
import { resources } from '../../../api/kind-bindings.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import type { AuthCall } from '../../auth/attributes.js';
import { GoogleApiError } from '../../google-errors.js';
import { googleApis } from '../../grpc/services.js';
import type { ApiMethod, CallMeta, HttpRule } from '../api-method.js';
import { authoriseRead, type WriteGate } from '../caller.js';
import { fieldManagerOf, WRITTEN_BY_ANNOTATION } from '../field-manager.js';
import { operationJson, type OperationJson } from './operation-message.js';
import {
  LAST_OPERATION_ANNOTATION,
  operationName,
  parseOperationName,
  resourceParts,
  stampedOperation,
  type OperationRef,
} from './operation-name.js';
import type { Derived, OperationVerbs } from './verbs.js';

export interface OperationsContext {
  readonly client: KubeClient;
  readonly gate: Pick<WriteGate, 'auth' | 'readNamespace'>;
  readonly verbs: OperationVerbs;
  readonly now?: () => Date;
}

export const DEFAULT_WAIT_MS = 60_000;
export const MAX_WAIT_MS = 600_000;
const POLL_MS = 500;

const COLLECTIONS: Readonly<Record<'models' | 'endpoints', { resource: ResourceRef; call: AuthCall; kind: string }>> = {
  models: { resource: resources.models, call: 'getModel', kind: 'Model' },
  endpoints: { resource: resources.predictionEndpoints, call: 'getEndpoint', kind: 'Endpoint' },
};

interface Located {
  readonly namespace: string;
  readonly collection: (typeof COLLECTIONS)['models'];
  readonly id: string;
}

async function locate(ctx: OperationsContext, resource: string, meta: CallMeta): Promise<Located> {
  const { project, collection, id } = resourceParts(resource);
  const c = COLLECTIONS[collection];
  const namespace = await authoriseRead(
    ctx.gate,
    meta.authorization,
    c.call,
    { project, name: id, described: resource },
    () => new GoogleApiError('NOT_FOUND', `${c.kind} ${resource} not found.`),
  );
  return { namespace, collection: c, id };
}

async function derive(ctx: OperationsContext, at: Located, ref: OperationRef): Promise<OperationJson> {
  const verb = ctx.verbs.get(ref.verb);
  const name = operationName(ref);
  if (verb === undefined)
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `name: ${name} is not an operation of this API (verb ${JSON.stringify(ref.verb)})`,
    );
  const derived: Derived = await verb.derive({
    ref,
    namespace: at.namespace,
    read: (resource, objectName) => ctx.client.get(resource, at.namespace, objectName),
  });
  return operationJson(name, ref, verb, derived, (ctx.now ?? (() => new Date()))());
}

/**
 * The Operation a write answers with: its state derived at once (usually not done yet). The write was authorised
 * already, as the caller, in `namespace`.
 */
export async function operationOfWrite(
  ctx: OperationsContext,
  namespace: string,
  ref: OperationRef,
): Promise<OperationJson> {
  const { collection, id } = resourceParts(ref.resource);
  return derive(ctx, { namespace, collection: COLLECTIONS[collection], id }, ref);
}

/** GetOperation: the operation as its objects say now. */
export async function getOperation(ctx: OperationsContext, name: string, meta: CallMeta): Promise<OperationJson> {
  const ref = parseOperationName(name);
  return derive(ctx, await locate(ctx, ref.resource, meta), ref);
}

function durationMs(timeout: unknown): number {
  if (timeout === undefined) return DEFAULT_WAIT_MS;
  const m = typeof timeout === 'string' ? /^(-?[0-9]+(?:\.[0-9]+)?)s$/.exec(timeout) : null;
  const ms = m === null ? NaN : Number(m[1]) * 1000;
  if (!Number.isFinite(ms) || ms < 0)
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `timeout: ${JSON.stringify(timeout)} is not a non-negative duration such as "30s"`,
    );
  return Math.min(ms, MAX_WAIT_MS);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** WaitOperation: the operation once done, or as it is when `timeout` (or the caller's deadline) passes. */
export async function waitOperation(
  ctx: OperationsContext,
  name: string,
  timeout: unknown,
  meta: CallMeta,
): Promise<OperationJson> {
  const ref = parseOperationName(name);
  const deadline = performance.now() + durationMs(timeout);
  const at = await locate(ctx, ref.resource, meta);
  for (;;) {
    const op = await derive(ctx, at, ref);
    const left = deadline - performance.now();
    if (op.done || left <= 0 || meta.signal.aborted) return op;
    await sleep(Math.min(POLL_MS, left), meta.signal);
  }
}

/** ListOperations: the operations derivable from the resource now (its latest API write), filtered by `done`. */
export async function listOperations(
  ctx: OperationsContext,
  resource: string,
  filter: string,
  meta: CallMeta,
): Promise<{ operations?: OperationJson[] }> {
  const wanted = /^\s*$/.test(filter) ? undefined : /^\s*done\s*=\s*(true|false)\s*$/.exec(filter)?.[1];
  if (wanted === undefined && !/^\s*$/.test(filter))
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `filter: ${JSON.stringify(filter.slice(0, 256))} is not supported; use done=true or done=false, or no filter`,
    );
  const at = await locate(ctx, resource, meta);
  const obj = await ctx.client.get(at.collection.resource, at.namespace, at.id);
  const writer = obj?.metadata.annotations?.[WRITTEN_BY_ANNOTATION];
  const ref = stampedOperation(
    resource,
    obj?.metadata.annotations?.[LAST_OPERATION_ANNOTATION],
    obj?.metadata.generation,
    writer === undefined ? undefined : fieldManagerOf(writer),
  );
  if (ref === undefined || ctx.verbs.get(ref.verb) === undefined) return {};
  const op = await derive(ctx, at, ref);
  return wanted === undefined || String(op.done) === wanted ? { operations: [op] } : {};
}

const OPERATION_PATHS = ['models', 'endpoints'].flatMap((c) =>
  ['/v1', '/ui'].map((prefix) => `${prefix}/{name=projects/*/locations/*/${c}/*/operations/*}`),
);
const RESOURCE_PATHS = ['models', 'endpoints'].flatMap((c) =>
  ['/v1', '/ui'].map((prefix) => `${prefix}/{name=projects/*/locations/*/${c}/*}/operations`),
);

function rules(method: HttpRule['method'], paths: readonly string[], suffix = '', body?: string): HttpRule[] {
  return paths.map((p) => ({ method, path: `${p}${suffix}`, ...(body !== undefined ? { body } : {}) }));
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The google.longrunning.Operations methods, for both transports. */
export function operationsMethods(ctx: OperationsContext): ApiMethod[] {
  const service = googleApis.getService('google.longrunning.Operations');
  if (service === undefined)
    throw new Error('the descriptor set has no google.longrunning.Operations: run npm run generate');
  return [
    {
      service,
      name: 'GetOperation',
      http: rules('GET', OPERATION_PATHS),
      call: (req, meta) => getOperation(ctx, text(req.name), meta),
    },
    {
      service,
      name: 'ListOperations',
      http: rules('GET', RESOURCE_PATHS),
      call: (req, meta) => listOperations(ctx, text(req.name), text(req.filter), meta),
    },
    {
      service,
      name: 'WaitOperation',
      http: rules('POST', OPERATION_PATHS, ':wait', '*'),
      call: (req, meta) => waitOperation(ctx, text(req.name), req.timeout, meta),
    },
    {
      service,
      name: 'DeleteOperation',
      http: rules('DELETE', OPERATION_PATHS),
      call: async (req, meta) => {
        // Nothing is stored: the operation is its object's state. Checked like a read, then answered Empty.
        await getOperation(ctx, text(req.name), meta);
        return {};
      },
    },
    {
      service,
      name: 'CancelOperation',
      http: rules('POST', OPERATION_PATHS, ':cancel', '*'),
      call: async (req, meta) => {
        const op = await getOperation(ctx, text(req.name), meta);
        throw new GoogleApiError(
          'FAILED_PRECONDITION',
          `${op.name} cannot be cancelled: operations here are derived from the objects a write changed, not jobs; delete or change the object instead`,
        );
      },
    },
  ];
}
