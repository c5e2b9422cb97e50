/**
 * gRPC's unary calls over HTTP/2 (`application/grpc`, uncompressed), served without Connect's stream machinery:
 * the request's one length-prefixed message is read whole, decoded, handed to the method's implementation (the
 * same function Connect serves for gRPC-Web and the rest: prediction-service.ts), and the answer written as one
 * message and its trailers, or a trailers-only status. Profiled on the prediction pipeline, Connect's
 * universal handler (async iterables per call, an aborted controller and its DOMException on every call's end)
 * cost about twice the whole REST call; this is the same protocol at a fraction of that (bench/results.json,
 * B6.grpc). Deadlines (`grpc-timeout`), statuses and their details are Connect's own helpers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { fromBinary, toBinary, type DescMessage, type DescMethodUnary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { parseTimeout, setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import { requestIdOf } from '../../http/request-id.js';
import type { AnyRequest } from '../../http/server.js';
import { CallerWatch } from '../caller.js';
import type { CallContext } from './context.js';

export type UnaryImpl = (req: never, ctx: CallContext) => Promise<unknown>;

export interface UnaryRoute {
  readonly method: DescMethodUnary<DescMessage, DescMessage>;
  readonly impl: UnaryImpl;
}

/** Whether this transport serves the request: gRPC proper on HTTP/2 with no message compression. */
export function isPlainGrpcUnary(req: AnyRequest): req is Http2ServerRequest {
  const type = req.headers['content-type'];
  const encoding = req.headers['grpc-encoding'];
  return (
    req.httpVersionMajor === 2 &&
    (type === 'application/grpc' || type === 'application/grpc+proto') &&
    (encoding === undefined || encoding === 'identity')
  );
}

/** The request's metadata as a method reads it: no pseudo-headers, no binary (`-bin`) entries. */
function metadataOf(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const name of Object.keys(headers))
    if (!name.startsWith(':') && !name.endsWith('-bin')) out[name] = headers[name] as string;
  return out;
}

/** The message of a unary request's body (one length-prefixed message), or the status that refuses it. */
function unwrapMessage(body: Buffer): Buffer {
  if (body.length < 5)
    throw new ConnectError('protocol error: missing input message for unary method', Code.InvalidArgument);
  if ((body[0] as number) & 0b1)
    throw new ConnectError('protocol error: received compressed message without grpc-encoding', Code.Internal);
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length)
    throw new ConnectError(
      `protocol error: a unary request holds one message of ${length} bytes, got ${body.length - 5}`,
      Code.InvalidArgument,
    );
  return body.subarray(5);
}

function readBody(req: Http2ServerRequest, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const pieces: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit + 5) {
        req.off('data', onData);
        reject(
          new ConnectError(
            `message size ${size - 5} is larger than configured readMaxBytes ${limit}`,
            Code.ResourceExhausted,
          ),
        );
        return;
      }
      pieces.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, size)));
    req.once('error', reject);
  });
}

function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name] = value));
  return out;
}

export interface UnaryOptions {
  /** The largest request message. */
  readonly bodyLimit: number;
  /** A failure as its status (the handler's one mapping: GoogleApiError keeps its code, the rest INTERNAL, reported). */
  readonly statusOf: (err: unknown, method: string, requestId: string) => ConnectError;
  /** The trailer Connect's status writer made, with `grpc-message` encoded as gRPC's clients read it (handler.ts). */
  readonly conform: (trailer: Headers) => void;
}

const OK_TRAILER = { 'grpc-status': '0' };

/** Serves one unary call of `route`; never rejects. */
export async function serveUnary(
  route: UnaryRoute,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
  options: UnaryOptions,
): Promise<void> {
  const contentType = String(req.headers['content-type']);
  const caller = new CallerWatch();
  const onClose = (): void => {
    if (!res.writableFinished) caller.leave(new ConnectError('the client cancelled the call', Code.Canceled));
  };
  res.once('close', onClose);
  const grpcTimeout = req.headers['grpc-timeout'];
  const timeout = parseTimeout(typeof grpcTimeout === 'string' ? grpcTimeout : null, Number.MAX_SAFE_INTEGER);
  const deadline =
    timeout.timeoutMs === undefined
      ? undefined
      : setTimeout(
          () => caller.leave(new ConnectError('the operation timed out', Code.DeadlineExceeded)),
          timeout.timeoutMs,
        );
  const responseHeaders: Record<string, string> = { 'content-type': contentType };
  const headers = metadataOf(req.headers);
  const ctx: CallContext = {
    headers,
    client: req.socket.remoteAddress,
    requestId: requestIdOf(req),
    caller,
    setHeader: (name, value) => (responseHeaders[name] = value),
  };
  let answer: Buffer | undefined;
  let failure: ConnectError | undefined;
  try {
    if (timeout.error !== undefined) throw timeout.error;
    const bytes = unwrapMessage(await readBody(req, options.bodyLimit));
    let message: unknown;
    try {
      message = fromBinary(route.method.input, bytes);
    } catch (err) {
      throw new ConnectError(`parse binary: ${err instanceof Error ? err.message : String(err)}`, Code.InvalidArgument);
    }
    const output = await route.impl(message as never, ctx);
    answer = frame(toBinary(route.method.output, output as never));
  } catch (err) {
    failure = caller.gone ? ConnectError.from(caller.reason) : options.statusOf(err, route.method.name, ctx.requestId);
  } finally {
    res.off('close', onClose);
    clearTimeout(deadline);
  }
  if (res.stream.destroyed || (caller.gone && failure?.code === Code.Canceled)) return;
  // Headers, then the message (none for a failure), then the status as trailers, as Connect writes them: node's
  // compatibility API ends a bodiless answer with an empty DATA frame, so a status in the headers alone would not
  // be "trailers-only" to gRPC's clients.
  if (answer === undefined) {
    const trailer = setTrailerStatus(new Headers(), failure);
    options.conform(trailer);
    res.addTrailers(headerRecord(trailer));
    res.writeHead(200, responseHeaders).end();
    return;
  }
  res.addTrailers(OK_TRAILER);
  res.writeHead(200, responseHeaders).end(answer);
}
