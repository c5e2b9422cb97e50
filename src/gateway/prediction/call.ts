/**
 * A prediction call as a transport hands it to the pipeline: REST (rest-transport.ts) reads it off an
 * HTTP request, gRPC (../grpc/prediction-service.ts) off a protobuf message, whose instances it reads as
 * JSON values when the encode stage asks. The pipeline sees only this, so both transports take exactly the
 * same stages.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Caller } from '../caller.js';
import type { JsonRequest } from './json.js';
import type { ReceivedBody } from './read-body.js';

export interface PredictionCall {
  /** `/v1/projects/{p}/locations/{l}/endpoints/{e}:{method}[?query]`, as the REST path spells it. */
  readonly path: string;
  /** `authorization`, `content-type`, trace context and the sticky header, lower-case (gRPC metadata included). */
  readonly headers: IncomingHttpHeaders;
  /** The client's address: the fairness key when calls are not authenticated. */
  readonly client: string | undefined;
  readonly requestId: string;
  readonly body: CallBody;
  /** Gone when the caller went away or its deadline passed: the model server call then ends at once. */
  readonly caller: Caller;
  /**
   * How a :predict or :explain answer is wanted: as JSON text (REST's body; the default) or as the JSON values
   * (gRPC writes its response message from them, without text between).
   */
  readonly answerAs?: 'text' | 'values';
}

/** The call's body, which a transport may not have read yet. */
export interface CallBody {
  /** What it weighs against its caller's byte budget (fairness.ts), at most `limit`. */
  weight(limit: number): number;
  /** Whether a refusal given before the body is read closes the connection rather than read it (unread-body.ts). */
  closesIfRefused(largeBodyBytes: number): boolean;
  /** The body, up to `limit` bytes (413 beyond). */
  read(limit: number): Promise<ReceivedBody>;
}

/**
 * A :predict or :explain request a transport reads itself, as JSON values (gRPC's message): `decode` runs once, in
 * the encode stage where REST parses its body, so its refusals come in REST's order. `size`: the message's bytes.
 */
export function decodedBody(size: number, decode: () => JsonRequest): CallBody {
  let result: { readonly request: JsonRequest } | { readonly refusal: unknown } | undefined;
  const once = (): JsonRequest => {
    if (result === undefined)
      try {
        result = { request: decode() };
      } catch (refusal) {
        result = { refusal };
      }
    if ('refusal' in result) throw result.refusal;
    return result.request;
  };
  return {
    weight: (limit) => Math.min(size, limit),
    closesIfRefused: () => false,
    read: async () => ({ pieces: [], size, decode: once }),
  };
}

/** A body a transport has already decoded (gRPC): nothing is waiting on a socket. */
export function receivedBody(bytes: Buffer): CallBody {
  return {
    weight: (limit) => Math.min(bytes.length, limit),
    closesIfRefused: () => false,
    read: async () => ({ pieces: [bytes], size: bytes.length }),
  };
}
