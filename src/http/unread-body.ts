/**
 * Answering a request before its body has been read: a refusal decided on the path and headers alone
 * (429 over the caller's budget, 401, 403, 404, 413 over the declared limit). Node's http server then
 * reads the body to its end to keep the connection (RFC 9112 §9.6 allows either). For a large body that
 * is the costly choice: every chunk read becomes a Buffer, so a caller looping large bodies against
 * its budget would have the gateway read, and collect, bytes it throws away. So a large
 * unread body (or one the client has not sent yet, waiting for `100 Continue`: RFC 9110 §10.1.1) is
 * not read: the answer says `Connection: close`, and the connection is closed in stages as RFC 9112
 * §9.6 asks, its write side once the answer is written and the whole a while later.
 *
 * Why in stages: Node closes a `Connection: close` socket as soon as the answer is written
 * (`socket.destroySoon`); with the body unread in its receive buffer the kernel then sends a TCP reset,
 * which can reach a client still sending before it has read the answer (undici then fails the call
 * with EPIPE instead of seeing the 429). Lingering without reading costs no CPU: the
 * client, told to close, stops sending, and the unread bytes are at most the socket's receive window.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a connection closed unread stays open after its answer: enough for the answer to reach the client and be read. */
export const UNREAD_BODY_LINGER_MS = 1_000;

/** What a request's headers say of its body, and whether it has arrived already. */
export interface BodyState {
  readonly headers: IncomingMessage['headers'];
  /** Node's `req.complete`: the whole message, body included, has been received. */
  readonly complete: boolean;
  /** The client waits for `100 Continue` before sending the body, and it has not been sent. */
  readonly awaitingContinue: boolean;
}

/**
 * Whether an answer given now should close the connection rather than read the body: a body that has
 * not arrived and is at least `largeBodyBytes` long (or of unknown length: chunked), or that the client
 * holds back until `100 Continue`. A small body is cheaper to read than a new connection is to make.
 */
export function closesRatherThanReads(body: BodyState, largeBodyBytes: number): boolean {
  if (body.complete) return false;
  const declared = body.headers['content-length'];
  if (declared === undefined) return body.headers['transfer-encoding'] !== undefined;
  const length = Number(declared);
  return length > 0 && (body.awaitingContinue || length >= largeBodyBytes);
}

/**
 * Drops what had arrived of an unread body (up to one socket read, ~64 KB) now rather than at the end
 * of the linger: until the socket closes, its parser keeps the request and those bytes. Kept a second,
 * they outlive young-generation GCs and count as the isolate's external memory, which is what starts
 * full collections when many refused connections linger at once. The request is ended
 * first, so that reading its buffer does not ask the socket for more, and marked complete (nothing
 * more of it will be read), so that ending it does not destroy the lingering socket
 * (_http_incoming.js _destroy aborts the socket of an incomplete request); its 'end' lets the server
 * release it (_http_server.js clearIncoming).
 */
function dropArrivedBody(req: IncomingMessage): void {
  req.complete = true;
  req.push(null);
  while (req.read() !== null);
}

/**
 * Makes the answer about to be written on `res` close the connection without reading `req`'s body:
 * reading stops now, the answer carries `Connection: close`, and the socket is half-closed once the
 * answer is written and destroyed `lingerMs` later.
 */
export function closeWithoutReading(req: IncomingMessage, res: ServerResponse, lingerMs = UNREAD_BODY_LINGER_MS): void {
  const socket = req.socket;
  // Taken by us (Node then does not read it to its end after the answer: _http_server.js resOnFinish),
  // and the socket no longer read: the http server's 'pause' listener stops its handle reading.
  req.read(0);
  socket.pause();
  res.setHeader('connection', 'close');
  // The server calls destroySoon once the answer is written; the staged close replaces its immediate one.
  socket.destroySoon = () => {
    socket.end();
    dropArrivedBody(req);
    setTimeout(() => socket.destroy(), lingerMs).unref();
  };
}
