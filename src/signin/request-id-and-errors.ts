/**
 * The sign-in API's answers that its port writes before fastify (the port's refusal) and its server-error report.
 * Every answer carries its request id in X-Request-Id, set by the port's front door (front-door.ts): the id the
 * server-error log line names (server-errors.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { PortRefusal } from '../http/front-door.js';
import type { AnyResponse } from '../http/request-types.js';
import { reportServerError } from '../http/server-errors.js';
import { SECURITY_HEADERS } from './over-share-refusal.js';
import { problemBody } from './problems.js';

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
