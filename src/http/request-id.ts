/**
 * The request id every answer carries in `X-Request-Id` and every server-error log line names, so an
 * operator can find the line a caller quotes. An id sent by the caller (or a proxy in front) is kept
 * when it is sane: short, and only characters that cannot forge a log line or a header.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The id a request was given, kept on the request so that the port (server.ts) and the framework behind it
 * (fastify's genReqId) name it alike. A property rather than a WeakMap: a WeakMap entry per request is work for
 * every young-generation collection, and this runs on every call.
 */
const GIVEN_ID = Symbol('endpoint-operator.requestId');

/** The caller's X-Request-Id when sane (one header, ≤128 safe characters), else a new random UUID; the same for one request. */
export function requestIdOf(req: Pick<IncomingMessage, 'headers'>): string {
  const named = req as { [GIVEN_ID]?: string };
  const known = named[GIVEN_ID];
  if (known !== undefined) return known;
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  named[GIVEN_ID] = id;
  return id;
}

/**
 * Whether the request has more than one Host header. RFC 9112 §3.2: a server MUST answer 400 to a
 * request with more than one Host field; Node keeps the first and drops the rest silently, so a
 * proxy reading the last one and this server would disagree about the target.
 */
export function hasDuplicateHost(req: Pick<IncomingMessage, 'rawHeaders'>): boolean {
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return true;
  }
  return false;
}

export const DUPLICATE_HOST_MESSAGE = 'the request has more than one Host header (RFC 9112 §3.2 allows exactly one)';
