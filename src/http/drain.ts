/**
 * A port that drains its HTTP/1.1 connections before it closes. A keep-alive connection the server ends while
 * idle may be the one a client is writing its next request onto at that moment: the client gets ECONNRESET and
 * does not retry a POST. So once close() is called, every HTTP/1.1 answer says `Connection: close` for up to
 * `drainMs`, and a client learns from an answer, not from a reset, to open a new connection (to another replica:
 * a terminating pod has left its Service's endpoints). The port closes as before when the last connection that
 * served HTTP/1.1 has gone or `drainMs` has passed. HTTP/2 needs none of this: its clients get GOAWAY.
 *
 * `closeIdleConnections()` waits for the drain too. fastify calls it itself when it closes a server of a
 * serverFactory (`forceCloseConnections: 'idle'`, its default where the server has the method, as Node 20's HTTP/2
 * server with allowHTTP1 does), just before close(): at once, it ended every idle kept-alive connection at SIGTERM,
 * and the chart test's rolling restart lost a call to ECONNRESET on a kept-alive connection (1 of 248). So a call of
 * it is remembered and made when the drain ends, before the port closes.
 */
import type { Socket } from 'node:net';
import type { AnyRequest, AnyResponse } from './request-types.js';

interface ClosableServer {
  close(callback?: (err?: Error) => void): unknown;
  prependListener(event: 'request' | 'checkContinue', listener: (req: AnyRequest, res: AnyResponse) => void): unknown;
  listenerCount(event: string): number;
  closeIdleConnections?: () => void;
}

/** Call after the port's own handlers are attached: a `checkContinue` listener of its own changes what Node does. */

export function drainBeforeClose(server: ClosableServer, drainMs: number): void {
  if (drainMs <= 0) return;
  const http1 = new Set<Socket>();
  let draining = false;
  let drained: (() => void) | undefined;
  const onRequest = (req: AnyRequest, res: AnyResponse): void => {
    if (req.httpVersionMajor !== 1) return;
    const socket = req.socket as Socket;
    if (!http1.has(socket)) {
      http1.add(socket);
      socket.once('close', () => {
        http1.delete(socket);
        if (http1.size === 0) drained?.();
      });
    }
    if (draining) res.setHeader('connection', 'close');
  };
  server.prependListener('request', onRequest);
  // Without a handler of the port's own, Node answers `100 Continue` itself and emits `request`.
  if (server.listenerCount('checkContinue') > 0) server.prependListener('checkContinue', onRequest);
  const close = server.close.bind(server);
  const closeIdle = server.closeIdleConnections?.bind(server);
  let closeIdleAsked = false;
  let ended = false;
  if (closeIdle !== undefined) {
    server.closeIdleConnections = () => {
      if (ended) closeIdle();
      else closeIdleAsked = true;
    };
  }
  server.close = (callback?: (err?: Error) => void) => {
    draining = true;
    void new Promise<void>((resolve) => {
      if (http1.size === 0) return resolve();
      drained = resolve;
      setTimeout(resolve, drainMs).unref();
    }).then(() => {
      ended = true;
      if (closeIdleAsked) closeIdle?.();
      close(callback);
    });
    return server;
  };
}
