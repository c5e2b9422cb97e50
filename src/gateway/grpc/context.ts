/**
 * What a gRPC handler learns from the HTTP request beneath it: the client's address (the fairness key when calls
 * are not authenticated), carried from the Node request into the handler's context values; and the context a
 * prediction method runs in (CallContext), made from Connect's or by the unary transport (unary.ts) directly.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createContextKey, createContextValues, type HandlerContext } from '@connectrpc/connect';
import type { AnyRequest } from '../../http/server.js';
import { callerOfSignal, type Caller } from '../caller.js';

const clientAddress = createContextKey<string | undefined>(undefined, { description: 'client address' });

export function contextValuesOf(req: AnyRequest) {
  return createContextValues().set(clientAddress, req.socket.remoteAddress);
}

export function clientAddressOf(ctx: HandlerContext): string | undefined {
  return ctx.values.get(clientAddress);
}

/** What a prediction method reads of its call and how it answers headers, whichever transport serves it. */
export interface CallContext {
  /** The metadata, lower-case, without pseudo-headers and binary (`-bin`) entries. */
  readonly headers: IncomingHttpHeaders;
  readonly client: string | undefined;
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
  return {
    headers: headersOf(ctx.requestHeader),
    client: clientAddressOf(ctx),
    caller: callerOfSignal(ctx.signal),
    setHeader: (name, value) => ctx.responseHeader.set(name, value),
  };
}
