/**
 * Every answer of the sign-in API carries its request id in X-Request-Id, the id the server-error log line names
 * (server-errors.ts). The port sets it too (front-door.ts), and refuses two Host headers there; this hook is for
 * answers that never pass a port (fastify's inject).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PortRefusal } from '../http/front-door.js';
import type { AnyResponse } from '../http/request-types.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { reportServerError } from '../http/server-errors.js';
import { SECURITY_HEADERS } from './over-share-refusal.js';
import { problemBody } from './problems.js';

export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}

/** The port's refusal (two Host headers) as the API's problem+json; the connection is closed, as on every port (the sign-in port is HTTP/1.1: TLS ends in front of it). */
export function sendPortRefusal(path: string, res: AnyResponse, refusal: PortRefusal): void {
  const body = JSON.stringify(problemBody('invalidRequest', refusal.message, path));
  res.writeHead(refusal.status, {
    'content-type': 'application/problem+json; charset=utf-8',
    ...SECURITY_HEADERS,
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  });
  res.end(body);
}

/** Logs and counts a 5xx of the sign-in API once (never the body: the request's log redacts it anyway). */
export function reportSignInServerError(request: FastifyRequest, status: number, err: unknown): void {
  reportServerError(request.log, {
    server: 'signin',
    route: request.routeOptions.url ?? 'unrouted',
    requestId: request.id,
    status,
    err,
  });
}
