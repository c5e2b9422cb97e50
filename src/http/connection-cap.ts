/**
 * A cap on a port's open connections that an attacker holding it cannot use to lock others out.
 * Node's own `server.maxConnections` refuses every new connection once the cap is reached, so 1,000
 * slowloris connections would take the port from everyone until they time out. Here, a new
 * connection at the cap closes the OLDEST connection that owes the server something rather than the
 * other way round: one idle between requests (keep-alive), or still sending its headers or its body.
 * Connections whose request has fully arrived and is being answered are never closed. A flood of
 * slow connections therefore recycles itself, oldest first, while a legitimate client's connection,
 * which sends its request at once, is answered before its turn to be closed comes. Only when every
 * connection is busy being answered is the new one refused (503 on plain HTTP).
 *
 * HTTPS ports (the webhooks, whose only caller is the kube-apiserver) use Node's plain cap: the
 * request's TLS socket is not the TCP socket the cap would track.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import { Counter } from 'prom-client';
import { metricsRegistry } from '../base/metrics-registry.js';

export const httpConnectionsShed = new Counter({
  name: 'endpoint_operator_http_connections_shed_total',
  help: 'Connections closed because a port reached its connection cap, by action: evicted (an idle or slow older connection closed for a new one) or refused (every connection was busy).',
  labelNames: ['action'] as const,
  registers: [metricsRegistry],
});

const REFUSAL = 'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n';

export class ConnectionCap {
  /** Insertion order is age order: the first evictable entry is the oldest. */
  private readonly open = new Map<Socket, { request: IncomingMessage | undefined }>();

  private constructor(private readonly max: number) {}

  static install(server: HttpServer | HttpsServer, max: number): ConnectionCap {
    const cap = new ConnectionCap(max);
    if (server instanceof TlsServer) {
      server.maxConnections = max;
      return cap;
    }
    server.on('connection', (socket: Socket) => cap.admit(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => cap.track(req, res));
    return cap;
  }

  get size(): number {
    return this.open.size;
  }

  private admit(socket: Socket): void {
    if (this.open.size >= this.max && !this.evictOldest()) {
      httpConnectionsShed.inc({ action: 'refused' });
      socket.end(REFUSAL);
      socket.destroySoon();
      return;
    }
    this.open.set(socket, { request: undefined });
    socket.once('close', () => this.open.delete(socket));
  }

  private track(req: IncomingMessage, res: ServerResponse): void {
    const state = this.open.get(req.socket);
    if (state === undefined) return;
    state.request = req;
    res.once('close', () => {
      if (state.request === req) state.request = undefined;
    });
  }

  private evictOldest(): boolean {
    for (const [socket, state] of this.open) {
      if (state.request === undefined || !state.request.complete) {
        this.open.delete(socket);
        socket.destroy();
        httpConnectionsShed.inc({ action: 'evicted' });
        return true;
      }
    }
    return false;
  }
}
