/**
 * Stage 4, read the body: node:http's chunks as they came, up to the body limit (beyond it 413; the
 * connection is then closed, as the rest is unread). Kept in pieces: a large body goes to a JSON
 * worker as they are, without being joined on the event loop.
 */
import type { IncomingMessage } from 'node:http';
import { GoogleApiError } from '../google-errors.js';
import type { JsonRequest } from './json.js';

export interface ReceivedBody {
  /** node:http's chunks, each owning its memory; none for a `decoded` body. */
  readonly pieces: readonly Buffer[];
  readonly size: number;
  /**
   * A :predict or :explain request its transport reads itself as JSON values (gRPC decodes its message straight to
   * them: ../grpc/value-wire.ts), checked as REST's parsed body is. Called by the encode stage, where REST parses
   * its body, so refusals come in the same order; the encode stage then writes the model server's body from it
   * with REST's encoder.
   */
  readonly decode?: (() => JsonRequest) | undefined;
}

/** The body's bytes: as received, or a decoded request written as the REST body it stands for (the request log's copy). */
export function joined(body: ReceivedBody): Buffer {
  if (body.decode !== undefined) {
    let request: JsonRequest;
    try {
      request = body.decode();
    } catch {
      // Refused by the encode stage; the log keeps no body for a message that could not be read.
      return Buffer.alloc(0);
    }
    const { instances, parameters, deployedModelId } = request;
    return Buffer.from(JSON.stringify({ instances, parameters, deployedModelId }));
  }
  return body.pieces.length === 1 ? (body.pieces[0] as Buffer) : Buffer.concat(body.pieces, body.size);
}

function payloadTooLarge(limit: number): GoogleApiError {
  return new GoogleApiError('INVALID_ARGUMENT', `Request payload size exceeds the limit: ${limit} bytes.`, 413);
}

export function readBody(req: IncomingMessage, limit: number): Promise<ReceivedBody> {
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(payloadTooLarge(limit));
  return new Promise((resolve, reject) => {
    const pieces: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        reject(payloadTooLarge(limit));
        return;
      }
      pieces.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ pieces, size }));
    req.once('error', reject);
  });
}
