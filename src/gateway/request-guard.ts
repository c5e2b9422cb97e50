/**
 * What every request to the gateway's port goes through before routing, on the hot path and on
 * fastify's: more than one Host header is refused (400, RFC 9112 §3.2), and every answer carries
 * its request id in X-Request-Id (the one a server-error log line names). Kept apart from server.ts
 * so the request-level rules sit in one place.
 */
import type { FastifyInstance, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DUPLICATE_HOST_MESSAGE, hasDuplicateHost, REQUEST_ID_HEADER } from '../http/request-id.js';
import { reportServerError } from '../http/server-errors.js';
import type { Logger } from '../runtime/logger.js';
import { GoogleApiError, sendGoogleError } from './google-errors.js';

/** False when the request was refused and answered here; the connection is then closed. */
export function admitGatewayRequest(req: IncomingMessage, res: ServerResponse): boolean {
  if (!hasDuplicateHost(req)) return true;
  const body = JSON.stringify(new GoogleApiError('INVALID_ARGUMENT', DUPLICATE_HOST_MESSAGE).body());
  res.writeHead(400, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  return false;
}

/** Adds X-Request-Id to every fastify answer of the gateway (the hot path sets its own). */
export function addRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}

/**
 * The answer to an error no route turned into a GoogleApiError: logged and counted once
 * (server-errors.ts), answered INTERNAL without the error's own text (which is not the caller's business).
 */
export function sendInternalError(log: Logger, request: FastifyRequest, reply: FastifyReply, err: FastifyError | Error): FastifyReply {
  reportServerError(log, { server: 'gateway', route: request.routeOptions.url ?? 'unrouted', requestId: request.id, status: 500, err });
  return sendGoogleError(reply, new GoogleApiError('INTERNAL', `Internal error; request id ${request.id}.`));
}
