/**
 * The one way this process opens an HTTP port: plain HTTP/1.1, or TLS answering HTTP/1.1 and HTTP/2 on the same
 * port (ALPN `h2`, `http/1.1`), as Google's front ends do, so REST and gRPC clients share one address; or TLS with
 * HTTP/1.1 alone (`http2: false`: the webhook port, see its server). Every port gets the limits of
 * server-limits.ts (timeouts, connection cap) and, with HTTP/2, HTTP/2's own bounds:
 *
 * - streams per connection (`maxConcurrentStreams`) and the header list (`maxHeaderListSize`), refused past them;
 * - the memory a session may hold for a slow reader (`maxSessionMemory`: its streams are refused beyond it);
 * - rapid reset (CVE-2023-44487): Node (≥ 20.8.1) closes a session that cancels streams faster than it opens them,
 *   and `maxSessionRejectedStreams` / `maxSessionInvalidFrames` end one that keeps misbehaving;
 * - an idle session is closed after the keep-alive timeout, as an idle HTTP/1.1 connection is.
 *
 * With `front` (front-door.ts), the port also gives every request its id (X-Request-Id), refuses more than one Host
 * header in the API's own error form and writes one access line per request.
 *
 * A client that does not trust the certificate fails its handshake; `onTlsError` hears it once per client
 * address and minute (clients retry, and a log line per retry says nothing new). Node has often let go of the
 * socket's address by then: such failures share the key 'unknown'.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import http2, { type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { drainBeforeClose } from './drain.js';
import { withFrontDoor, type FrontDoor } from './front-door.js';
import type { RequestHandler } from './request-types.js';
import { applyServerLimits, serverTimeoutOptions, type ServerLimits } from './server-limits.js';

export type { AnyRequest, AnyResponse, RequestHandler } from './request-types.js';
export type NodeServer = http.Server | https.Server | Http2SecureServer;

/** A PEM certificate chain and its key. */
export interface TlsPair {
  readonly cert: string;
  readonly key: string;
}

/** HTTP/2 bounds of a TLS port; the defaults suit the gateway. */
export interface Http2Limits {
  readonly maxConcurrentStreams: number;
  readonly maxHeaderListSize: number;
  /** Megabytes a session may buffer (Node's unit). */
  readonly maxSessionMemoryMb: number;
}

export const DEFAULT_HTTP2_LIMITS: Http2Limits = {
  maxConcurrentStreams: 128,
  maxHeaderListSize: 64 * 1024,
  maxSessionMemoryMb: 32,
};

export interface ServerOptions {
  readonly limits: ServerLimits;
  /** TLS with ALPN h2 and http/1.1; absent = plain HTTP/1.1 (an explicit setting: behind a proxy that terminates TLS). */
  readonly tls?: TlsPair | undefined;
  /** With `tls`: offer HTTP/2 too (ALPN `h2`), the default; false: HTTP/1.1 alone (ALPN `http/1.1`). */
  readonly http2?: boolean;
  readonly http2Limits?: Http2Limits;
  /** The request id, the duplicate-Host refusal and the access line, done by the port (front-door.ts). */
  readonly front?: FrontDoor;
  readonly onRequest: RequestHandler;
  /** `Expect: 100-continue` requests (RFC 9110 §10.1.1); absent = Node answers `100 Continue` itself. */
  readonly onCheckContinue?: RequestHandler;
  /** A failed TLS handshake, at most once per client address (or once for those whose address is gone) a minute. */
  readonly onTlsError?: (client: string, err: Error) => void;
  /** How long close() tells HTTP/1.1 clients to reconnect before it closes (drain.ts); default 0. */
  readonly drainMs?: number;
}

const TLS_ERROR_QUIET_MS = 60_000;

/** A plain HTTP/1.1 port (the health and sign-in ports, and the gateway with --plain-http): its handlers get node:http's objects. */
export function createHttpServer(options: {
  readonly limits: ServerLimits;
  readonly front?: FrontDoor | undefined;
  readonly onRequest: (req: IncomingMessage, res: ServerResponse) => void;
  readonly onCheckContinue?: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  readonly drainMs?: number | undefined;
}): http.Server {
  const onRequest = options.front === undefined ? options.onRequest : withFrontDoor(options.front, options.onRequest);
  const server = http.createServer(serverTimeoutOptions(options.limits), onRequest);
  if (options.onCheckContinue !== undefined) server.on('checkContinue', options.onCheckContinue);
  applyServerLimits(server, options.limits);
  drainBeforeClose(server, options.drainMs ?? 0, false);
  return server;
}

export function createServer(options: ServerOptions): NodeServer {
  const { limits, front } = options;
  const onRequest = front === undefined ? options.onRequest : withFrontDoor(front, options.onRequest);
  const onCheckContinue =
    front === undefined || options.onCheckContinue === undefined
      ? options.onCheckContinue
      : withFrontDoor(front, options.onCheckContinue);
  if (options.tls === undefined)
    return createHttpServer({ limits, onRequest, onCheckContinue, drainMs: options.drainMs });
  if (options.http2 === false) {
    const server = https.createServer(
      {
        cert: options.tls.cert,
        key: options.tls.key,
        minVersion: 'TLSv1.2',
        ALPNProtocols: ['http/1.1'],
        ...serverTimeoutOptions(limits),
      },
      onRequest,
    );
    if (onCheckContinue !== undefined) server.on('checkContinue', onCheckContinue);
    drainBeforeClose(server, options.drainMs ?? 0, true);
    applyServerLimits(server, limits);
    reportTlsErrors(server, options.onTlsError);
    return server;
  }
  const h2 = options.http2Limits ?? DEFAULT_HTTP2_LIMITS;
  const server = http2.createSecureServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      minVersion: 'TLSv1.2',
      allowHTTP1: true,
      settings: { maxConcurrentStreams: h2.maxConcurrentStreams, maxHeaderListSize: h2.maxHeaderListSize },
      maxSessionMemory: h2.maxSessionMemoryMb,
      maxSessionRejectedStreams: 100,
      maxSessionInvalidFrames: 1000,
      ...serverTimeoutOptions(limits),
    },
    onRequest,
  );
  if (onCheckContinue !== undefined) server.on('checkContinue', onCheckContinue);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.setTimeout(limits.keepAliveTimeoutMs, () => session.close());
  });
  // Closing the port closes its HTTP/2 sessions gracefully too (GOAWAY: streams in flight finish), as closing an
  // HTTP/1.1 port ends its idle keep-alive connections; otherwise close() would wait for every client to leave.
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    for (const session of sessions) session.close();
    return close(callback);
  };
  drainBeforeClose(server, options.drainMs ?? 0, true);
  applyServerLimits(server as unknown as http.Server, limits);
  reportTlsErrors(server, options.onTlsError);
  return server;
}

function reportTlsErrors(server: https.Server | Http2SecureServer, onTlsError: ServerOptions['onTlsError']): void {
  if (onTlsError === undefined) return;
  const lastHeard = new Map<string, number>();
  server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
    const client = socket.remoteAddress ?? 'unknown';
    const now = Date.now();
    if (now - (lastHeard.get(client) ?? -Infinity) < TLS_ERROR_QUIET_MS) return;
    if (lastHeard.size > 10_000) lastHeard.clear();
    lastHeard.set(client, now);
    onTlsError(client, err);
  });
}

/** Replaces a TLS port's certificate for new connections (rotation); a plain port has none. */
export function setServerCertificate(server: NodeServer, tls: TlsPair): void {
  if ('setSecureContext' in server) server.setSecureContext({ cert: tls.cert, key: tls.key });
}
