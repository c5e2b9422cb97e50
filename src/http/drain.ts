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
 *
 * A connection that never began a request is closed then too. Node 20's closeIdleConnections() leaves it open
 * (nodejs/node#63452; later releases close it, #63470), so close() waited for the client to end it, and clients
 * open such connections: Go's http.Transport parks a connection it dialled for a request that another connection
 * took, and closes it after 90 s idle (IdleConnTimeout), which held the kube-apiserver's webhook port open for 84-86 s
 * at Ctrl-C. An HTTP/2 connection is not one of them: its session gets GOAWAY (server.ts).
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { AnyRequest, AnyResponse } from './request-types.js';

interface ClosableServer {
  close(callback?: (err?: Error) => void): unknown;
  on(event: 'connection' | 'secureConnection', listener: (socket: Socket) => void): unknown;
  prependListener(event: 'request' | 'checkContinue', listener: (req: AnyRequest, res: AnyResponse) => void): unknown;
  listenerCount(event: string): number;
  closeIdleConnections?: () => void;
}

/** Call after the port's own handlers are attached: a `checkContinue` listener of its own changes what Node does. */

export function drainBeforeClose(server: ClosableServer, drainMs: number, tls: boolean): void {
  const unused = new Set<Socket>();
  server.on(tls ? 'secureConnection' : 'connection', (socket) => {
    if ((socket as Partial<TLSSocket>).alpnProtocol === 'h2') return;
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  const http1 = new Set<Socket>();
  let draining = false;
  let drained: (() => void) | undefined;
  const onRequest = (req: AnyRequest, res: AnyResponse): void => {
    if (req.httpVersionMajor !== 1) return;
    const socket = req.socket as Socket;
    unused.delete(socket);
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
      if (http1.size === 0 || drainMs <= 0) return resolve();
      drained = resolve;
      setTimeout(resolve, drainMs).unref();
    }).then(() => {
      ended = true;
      for (const socket of unused) socket.destroy();
      if (closeIdleAsked) closeIdle?.();
      close(callback);
    });
    return server;
  };
}
