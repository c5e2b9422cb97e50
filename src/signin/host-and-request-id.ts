/**
 * Two things every request to the sign-in port gets, whatever its route: more than one Host header is
 * refused (400, RFC 9112 §3.2), and every answer carries its request id in X-Request-Id, the id the
 * server-error log line names (server-errors.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DUPLICATE_HOST_MESSAGE, hasDuplicateHost, REQUEST_ID_HEADER } from '../http/request-id.js';
import { reportServerError } from '../http/server-errors.js';
import { SignInProblem } from './problems.js';

/** Logins over their client's share never get this far: over-share-refusal.ts answers them in the server's request event. */
export function refuseDuplicateHostAndEchoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (hasDuplicateHost(request.raw)) throw new SignInProblem('invalidRequest', DUPLICATE_HOST_MESSAGE);
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
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
