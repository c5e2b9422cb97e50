/**
 * Stage 6, encode: the caller's body → the model server's request, for the chosen model's protocol.
 * `:predict` and `:explain` are read as Vertex reads them (a REST body parsed here, a gRPC message already
 * read as JSON values by its transport's decoder, called here) and rewritten by the same encoder (json.ts);
 * `:rawPredict` goes on unchanged. A :predict body from `largeBodyBytes` up is read and rewritten on a
 * JSON worker (json-worker-pool.ts) instead of the event loop: the same work, another executor.
 *
 * The model is chosen inside this stage because :explain's choice reads the body (its
 * deployedModelId). Refusals come in one order whatever the executor: the body's own faults first,
 * then the model's, then the rewrite's (a V2 tensor mapping).
 */
import { scanJson } from '../../http/json-guard.js';
import { GoogleApiError } from '../google-errors.js';
import type { JsonWorkerPool } from '../json-worker-pool.js';
import { parseJsonRequest, serializeUpstreamRequest } from './json.js';
import { isRawMethod, type PredictionMethod } from './protocols.js';
import type { Serving } from './choose-model.js';
import { joined, type ReceivedBody } from './read-body.js';
import type { GatewaySettings } from '../settings.js';

/** Where JSON work is done: on the event loop below `largeBodyBytes`, on the pool from there up. */
export interface JsonExecutor {
  readonly jsonWorkers: Pick<JsonWorkerPool, 'run'>;
  readonly settings: Pick<GatewaySettings, 'largeBodyBytes'>;
}

export interface EncodedRequest {
  readonly serving: Serving;
  readonly body: Buffer | string;
  readonly contentType: string;
  /** How many instances the call holds: what the answer is checked against. Undefined for :rawPredict (its answer passes unchanged). */
  readonly instanceCount: number | undefined;
}

export interface RequestBody {
  readonly received: ReceivedBody;
  /** Whether its pieces may be moved to a worker (not when the request log still needs them here). */
  readonly movable: boolean;
  /** The caller's Content-Type header. */
  readonly contentType: string | string[] | undefined;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** rawPredict forwards its body unchanged, but a JSON one still gets the nesting limit every JSON route has. */
function checkRawJson(contentType: string | string[] | undefined, body: Buffer): void {
  if (typeof contentType !== 'string' || !JSON_TYPE.test(contentType)) return;
  try {
    scanJson(body);
  } catch (err) {
    throw new GoogleApiError('INVALID_ARGUMENT', `Invalid JSON payload received. ${(err as Error).message}`);
  }
}

/** `choose`: the model (and where it is served) for a deployedModelId named in the body, or for none. */
export async function encodeRequest(
  method: PredictionMethod,
  body: RequestBody,
  choose: (explicitId: unknown) => Serving,
  executor: JsonExecutor,
): Promise<EncodedRequest> {
  if (isRawMethod(method)) {
    const bytes = joined(body.received);
    checkRawJson(body.contentType, bytes);
    return {
      serving: choose(undefined),
      body: bytes,
      contentType: typeof body.contentType === 'string' ? body.contentType : 'application/json',
      instanceCount: undefined,
    };
  }
  const { decode } = body.received;
  // A request its transport decodes is written here at any size: its values live on the event loop already.
  if (decode === undefined && method === 'predict' && body.received.size >= executor.settings.largeBodyBytes)
    return encodeOnWorker(body, choose, executor);
  const json = decode !== undefined ? decode() : parseJsonRequest(joined(body.received));
  const serving = choose(method === 'explain' ? json.deployedModelId : undefined);
  return {
    serving,
    body: serializeUpstreamRequest(serving.protocol, json, serving.model.id),
    contentType: 'application/json',
    instanceCount: json.instances.length,
  };
}

async function encodeOnWorker(
  body: RequestBody,
  choose: (explicitId: unknown) => Serving,
  executor: JsonExecutor,
): Promise<EncodedRequest> {
  // :predict's choice does not read the body, so it is made first; its refusal waits for the body's own checks.
  let serving: Serving | undefined;
  let refusal: unknown;
  try {
    serving = choose(undefined);
  } catch (err) {
    refusal = err;
  }
  const task = {
    kind: 'request' as const,
    body: body.received.pieces,
    protocol: serving?.protocol,
    modelId: serving?.model.id ?? '',
  };
  const prepared = await executor.jsonWorkers.run(task, body.movable);
  if (serving === undefined) throw refusal;
  return { serving, body: prepared.bytes, contentType: 'application/json', instanceCount: prepared.instanceCount ?? 0 };
}
