/**
 * The cheapest answer of the sign-in port: a login from a client that already holds its whole share
 * of password verifications (verification-queue.ts) is answered 429 from the HTTP server's request
 * event, before fastify routes it, reads its body or logs it, with a body and headers built once.
 *
 * Why so early: under a flood of logins from one address the refusals are nearly all of the main
 * thread's work, and every microsecond of one is taken from the other clients' logins, whose answers
 * wait on the same event loop. Through fastify a refusal pays for an Error and its stack trace,
 * routing, request and reply objects, the hooks, the error handler and log lines; here it is little
 * more than Node's HTTP parse and the write of the answer (B5-flood, docs/hostile-input.md).
 *
 * Only requests that would certainly be refused are answered here: a POST to a login route (one that verifies a
 * password: the route table says which, server.ts; with a single Host header: the port refuses two before this
 * runs, front-door.ts), carrying no device cookie
 * (a client with a device token for the account has its own share, known only once the body names the account).
 * Everything else goes to fastify unchanged, where `admit` refuses what slips through.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOf, REQUEST_ID_HEADER } from '../http/request-id.js';
import { hasDeviceCookie } from './device-trust.js';
import { problemBody } from './problems.js';
import type { VerificationQueue } from './verification-queue.js';

export const OVER_SHARE_DETAIL = 'too many sign-ins in progress from this client; try again in a moment';

/** The key a client's share is counted under when it has no device token: the same as `authenticate` uses. */
export function addressClientKey(address: string): string {
  return `address ${address}`;
}

/** The headers every sign-in answer carries (server.ts sets them on fastify's answers). */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
} as const;

// A string body: Node then sends the head and the body in one write instead of a writev of two.
type Refusal = { readonly body: string; readonly headers: Readonly<Record<string, string>> };

function refusalFor(path: string): Refusal {
  const body = JSON.stringify(problemBody('tooManyAttempts', OVER_SHARE_DETAIL, path));
  return {
    body,
    headers: {
      'content-type': 'application/problem+json; charset=utf-8',
      'retry-after': '1',
      ...SECURITY_HEADERS,
      'cache-control': 'no-store',
      'content-length': String(Buffer.byteLength(body)),
    },
  };
}

export interface OverShareRefusal {
  /** Covers these login paths (the routes that verify a password, known once every route is registered). */
  cover(paths: readonly string[]): void;
  /**
   * A request listener's first step: answers `req` 429 and returns true when it is a login from a client over its
   * share; returns false, having done nothing, for every other request.
   */
  refuse(req: IncomingMessage, res: ServerResponse): boolean;
}

export function overShareRefusal(
  verifications: VerificationQueue,
  clientAddress: (req: IncomingMessage) => string,
): OverShareRefusal {
  const refusals = new Map<string, Refusal>();
  const cover = (paths: readonly string[]): void => {
    for (const path of paths) refusals.set(path, refusalFor(path));
  };
  const refuse = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const refusal = refusals.get(query < 0 ? url : url.slice(0, query));
    if (refusal === undefined || hasDeviceCookie(req.headers.cookie)) return false;
    if (!verifications.refuseOverShare(addressClientKey(clientAddress(req)))) return false;
    res.writeHead(429, { ...refusal.headers, [REQUEST_ID_HEADER]: requestIdOf(req) });
    // The body (a few bytes, already in the socket's buffer) is not read: Node discards it before
    // the next request of the connection.
    res.end(refusal.body);
    return true;
  };
  return { cover, refuse };
}
