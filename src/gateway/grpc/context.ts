/**
 * What a gRPC handler learns from the HTTP request beneath it: the client's address (the fairness key when calls
 * are not authenticated), carried from the Node request into the handler's context values.
 */
import { createContextKey, createContextValues, type HandlerContext } from '@connectrpc/connect';
import type { AnyRequest } from '../../http/server.js';

const clientAddress = createContextKey<string | undefined>(undefined, { description: 'client address' });

export function contextValuesOf(req: AnyRequest) {
  return createContextValues().set(clientAddress, req.socket.remoteAddress);
}

export function clientAddressOf(ctx: HandlerContext): string | undefined {
  return ctx.values.get(clientAddress);
}
