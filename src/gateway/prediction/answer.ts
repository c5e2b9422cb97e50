/**
 * Stage 9, answer: the answer (or the error the one answerer rendered) is written with the headers
 * every prediction answer carries (`X-Request-Id`, and Vertex's `X-Vertex-AI-Deployed-Model-Id` and
 * `X-Vertex-AI-Endpoint-Id` once known), then the call is counted, its span ended and, when sampled,
 * logged (request-log.ts). A caller that went away gets nothing written and is counted 499.
 */
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import { REQUEST_ID_HEADER } from '../../http/request-id.js';
import { gatewayRequestDuration, gatewayRequests } from '../metrics.js';
import type { PredictionMethod } from './protocols.js';
import type { RequestLogger } from '../request-log.js';
import type { ResolvedEndpoint, ResolvedModel } from '../routing-table.js';
import type { CallSpan } from '../tracing.js';
import { answerText, type Answer } from './decode.js';

export const DEPLOYED_MODEL_HEADER = 'x-vertex-ai-deployed-model-id';
export const ENDPOINT_HEADER = 'x-vertex-ai-endpoint-id';

/** What the pipeline knew of a call when it was answered. */
export interface AnsweredCall {
  readonly requestId: string;
  readonly method: PredictionMethod | undefined;
  readonly endpoint: ResolvedEndpoint | undefined;
  readonly model: ResolvedModel | undefined;
  /** The request as the request log keeps it; only for a sampled call. */
  readonly logged: { readonly body: Buffer; readonly contentType: string | undefined } | undefined;
  readonly trace: CallSpan | undefined;
}

export function writeAnswer(res: ServerResponse | Http2ServerResponse, answer: Answer, call: AnsweredCall): void {
  const headers: Record<string, string | number> = {
    ...answer.headers,
    'content-type': answer.contentType,
    'content-length': Buffer.byteLength(answer.body),
    [REQUEST_ID_HEADER]: call.requestId,
  };
  if (call.model !== undefined) headers[DEPLOYED_MODEL_HEADER] = call.model.id;
  if (call.endpoint !== undefined) headers[ENDPOINT_HEADER] = call.endpoint.endpointId;
  const stream = answer.stream;
  if (stream === undefined) {
    res.writeHead(answer.status, headers).end(answer.body);
    return;
  }
  // Streamed as it arrives: no length, each chunk flushed (SSE and chunked answers reach the caller piece by piece).
  delete headers['content-length'];
  res.writeHead(answer.status, headers);
  res.once('close', () => stream.destroy());
  stream.on('error', () => res.destroy());
  stream.pipe(res as NodeJS.WritableStream);
}

/** Counts, ends the span of and (sampled) logs a call answered `code` after `seconds`. */
export function recordCall(
  requestLog: Pick<RequestLogger, 'write'>,
  call: AnsweredCall,
  answer: Answer,
  code: number,
  seconds: number,
): void {
  call.trace?.end(code, call.model?.id);
  const namespace = call.endpoint?.namespace ?? '';
  const endpoint = call.endpoint?.name ?? '';
  const method = call.method ?? 'unknown';
  gatewayRequests.inc({
    namespace,
    endpoint,
    deployed_model: call.model?.id ?? '',
    deployed_model_name: call.model?.deployedModelName ?? '',
    method,
    code: String(code),
  });
  gatewayRequestDuration.observe({ namespace, endpoint, method }, seconds);
  if (call.logged !== undefined && call.endpoint !== undefined) {
    requestLog.write({
      namespace,
      endpoint,
      resourceName: call.endpoint.resourceName,
      deployedModelId: call.model?.id,
      method,
      code,
      latencyMs: Math.round(seconds * 1e6) / 1e3,
      request: call.logged.body,
      response: answerText(answer),
      requestContentType: call.logged.contentType,
      responseContentType: answer.contentType,
    });
  }
}
