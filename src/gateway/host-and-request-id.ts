/**
 * What every request to the gateway's port goes through before routing, prediction pipeline and
 * fastify alike: more than one Host header is refused (400, RFC 9112 §3.2), and every answer carries
 * its request id in X-Request-Id (the one a server-error log line names).
 */
import type { FastifyInstance } from 'fastify';
import type { AnyRequest, AnyResponse } from '../http/server.js';
import { DUPLICATE_HOST_MESSAGE, hasDuplicateHost, REQUEST_ID_HEADER } from '../http/request-id.js';
import { renderGoogleError } from './error-answer.js';
import { GoogleApiError } from './google-errors.js';

/** False when the request was refused and answered here; the connection is then closed. */
export function admitOneHost(req: AnyRequest, res: AnyResponse): boolean {
  if (!hasDuplicateHost(req)) return true;
  const rendered = renderGoogleError(new GoogleApiError('INVALID_ARGUMENT', DUPLICATE_HOST_MESSAGE));
  // HTTP/2 has no Connection header (RFC 9113 §8.2.2): the stream ends, the connection carries others.
  const close = req.httpVersionMajor === 2 ? {} : { connection: 'close' };
  res.writeHead(rendered.status, {
    ...rendered.headers,
    'content-length': Buffer.byteLength(rendered.body),
    ...close,
  });
  res.end(rendered.body);
  return false;
}

/** Adds X-Request-Id to every fastify answer of the gateway (the prediction pipeline sets its own). */
export function addRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}
