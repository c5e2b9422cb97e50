/**
 * What every request to the sign-in port goes through before its route: more than one Host header is
 * refused (400, RFC 9112 §3.2), and every answer carries its request id in X-Request-Id, the id the
 * server-error log line names (server-errors.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DUPLICATE_HOST_MESSAGE, hasDuplicateHost, REQUEST_ID_HEADER } from '../http/request-id.js';
import { reportServerError } from '../http/server-errors.js';
import { SignInProblem } from './problems.js';
import type { VerificationQueue } from './verification-queue.js';

/** The login routes: each verifies a password, so each takes a place in the verification queue. */
const LOGIN_PATH = /^\/auth\/(?:admin|shop|pos)\/login(?:\?|$)/;

/**
 * Besides the Host rule: a login from an address that already holds its whole share of password
 * verifications, and presents no cookie (so no device token that would give it its own share), is
 * refused here, before its body is read and decoded: a flood of such logins costs the server as
 * little as possible, which is what keeps other clients' logins fast.
 */
export function guardSignInRequests(app: FastifyInstance, verifications: VerificationQueue): void {
  app.addHook('onRequest', async (request) => {
    if (hasDuplicateHost(request.raw)) throw new SignInProblem('invalidRequest', DUPLICATE_HOST_MESSAGE);
    if (request.method === 'POST' && request.headers.cookie === undefined && LOGIN_PATH.test(request.url) && verifications.isOverShare(`address ${request.ip}`)) {
      throw new SignInProblem('tooManyAttempts', 'too many sign-ins in progress from this client; try again in a moment', { retryAfterSeconds: 1 });
    }
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}

/** Logs and counts a 5xx of the sign-in API once (never the body: the request's log redacts it anyway). */
export function reportSignInServerError(request: FastifyRequest, status: number, err: unknown): void {
  reportServerError(request.log, { server: 'signin', route: request.routeOptions.url ?? 'unrouted', requestId: request.id, status, err });
}
