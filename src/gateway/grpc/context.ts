/**
 * What a gRPC handler learns from the HTTP request beneath it, carried from the Node request into the handler's
 * context values: the client's address (the fairness key when calls are not authenticated) and the request id the
 * port gave the request (the one its access line names and its answer's `x-request-id` carries); and the context a
 * prediction method runs in (CallContext), made from Connect's or by the unary transport (unary.ts) directly.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createContextKey, createContextValues, type ContextValues, type HandlerContext } from '@connectrpc/connect';
import { requestIdOf } from '../../http/request-id.js';
import type { AnyRequest } from '../../http/server.js';
import { callerOfSignal, type Caller } from '../caller.js';

const clientAddress = createContextKey<string | undefined>(undefined, { description: 'client address' });
const requestId = createContextKey<string | undefined>(undefined, { description: 'request id' });

export function contextValuesOf(req: AnyRequest) {
  return createContextValues().set(clientAddress, req.socket.remoteAddress).set(requestId, requestIdOf(req));
}

export function clientAddressOf(ctx: HandlerContext): string | undefined {
  return ctx.values.get(clientAddress);
}

/** The request id of the HTTP request a call came in (undefined only for values not made by contextValuesOf). */
export function requestIdOfCall(values: ContextValues): string | undefined {
  return values.get(requestId);
}

/** What a prediction method reads of its call and how it answers headers, whichever transport serves it. */
export interface CallContext {
  /** The metadata, lower-case, without pseudo-headers and binary (`-bin`) entries. */
  readonly headers: IncomingHttpHeaders;
  readonly client: string | undefined;
  /** The request's id (request-id.ts), as the port gave it: what the pipeline's log lines and the answer name. */
  readonly requestId: string;
  /** Gone when the client went away or its deadline passed; its reason is the call's status. */
  readonly caller: Caller;
  setHeader(name: string, value: string): void;
}

/** gRPC metadata as the lower-case header record the pipeline reads (binary `-bin` entries are left out). */
export function headersOf(metadata: Headers): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  metadata.forEach((value, name) => {
    if (!name.endsWith('-bin')) headers[name] = value;
  });
  return headers;
}

export function callContextOf(ctx: HandlerContext): CallContext {
  const headers = headersOf(ctx.requestHeader);
  return {
    headers,
    client: clientAddressOf(ctx),
    requestId: requestIdOfCall(ctx.values) ?? requestIdOf({ headers }),
    caller: callerOfSignal(ctx.signal),
    setHeader: (name, value) => ctx.responseHeader.set(name, value),
  };
}
