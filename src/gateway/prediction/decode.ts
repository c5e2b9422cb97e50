/**
 * Stage 8, decode: the model server's answer → Vertex's. `:rawPredict`'s passes unchanged, whatever
 * its status; for `:predict` and `:explain` a non-2xx answer becomes the Google error naming the
 * deployed model, and a 2xx one is rewritten (json.ts), from `largeBodyBytes` up on a JSON
 * worker (as text), as the request was; below that, as JSON values when the transport asked for them (gRPC).
 */
import { answerError } from './errors.js';
import type { ServingModel } from './json.js';
import { vertexAnswer, vertexAnswerValue, type VertexAnswer } from './json.js';
import { isRawMethod, type PredictionMethod } from './protocols.js';
import type { Readable } from 'node:stream';
import { answerBytes, type UpstreamResponse, type UpstreamStream } from '../upstream.js';
import type { EncodedRequest, JsonExecutor } from './encode.js';

/** What the caller is answered (before the headers every answer carries). */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer | string;
  /** Headers a refusal carries besides the body (`WWW-Authenticate` on a 401). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** :streamRawPredict's answer body, passed on as it arrives (`body` is then empty). */
  readonly stream?: Readable | undefined;
  /** A :predict or :explain answer as JSON values, for a call that asked for them (`body` is then empty). */
  readonly values?: VertexAnswer | undefined;
}

/** The answer's body as text, whichever form it was made in (the request log's copy). */
export function answerText(answer: Answer): Buffer | string {
  return answer.values === undefined ? answer.body : JSON.stringify(answer.values);
}

export const JSON_CONTENT_TYPE = 'application/json; charset=UTF-8';

export async function decodeAnswer(
  method: PredictionMethod,
  request: EncodedRequest,
  res: UpstreamResponse | UpstreamStream,
  executor: JsonExecutor,
  answerAs: 'text' | 'values' = 'text',
): Promise<Answer> {
  if ('body' in res) {
    const type = res.headers['content-type'];
    const contentType = typeof type === 'string' ? type : 'application/octet-stream';
    return { status: res.status, contentType, body: '', stream: res.body };
  }
  if (isRawMethod(method) || request.instanceCount === undefined) {
    const type = res.headers['content-type'];
    return {
      status: res.status,
      contentType: typeof type === 'string' ? type : 'application/octet-stream',
      body: answerBytes(res),
    };
  }
  const { model, protocol } = request.serving;
  if (res.status < 200 || res.status >= 300) throw answerError(model, res);
  const servedBy: ServingModel = {
    id: model.id,
    deployedModelName: model.deployedModelName,
    model: model.model,
    modelDisplayName: model.modelDisplayName,
    modelVersionId: model.modelVersionId,
    origin: res.target.origin,
  };
  const instanceCount = request.instanceCount;
  // A large answer goes to the worker in the pieces it came in; those that are whole socket reads are moved, the others copied.
  if (res.size >= executor.settings.largeBodyBytes) {
    const { bytes } = await executor.jsonWorkers.run(
      { kind: 'answer', body: res.pieces, method, protocol, instanceCount, model: servedBy },
      true,
    );
    return { status: 200, contentType: JSON_CONTENT_TYPE, body: bytes };
  }
  if (answerAs === 'values') {
    const values = vertexAnswerValue(method, protocol, answerBytes(res), instanceCount, servedBy);
    return { status: 200, contentType: JSON_CONTENT_TYPE, body: '', values };
  }
  const body = vertexAnswer(method, protocol, answerBytes(res), instanceCount, servedBy);
  return { status: 200, contentType: JSON_CONTENT_TYPE, body };
}
