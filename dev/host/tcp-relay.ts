/**
 * A TCP relay: each connection accepted on one address is carried, bytes unchanged (TLS stays end to end), to the
 * port `target()` names when it arrives. A connection keeps the target it started with, so moving the target is
 * what a Service does when its endpoints change: new connections reach the new port, open ones finish where they are.
 */
import { createConnection, createServer, type Socket } from 'node:net';

export interface TcpRelay {
  /** The port the relay listens on (the one asked for, or the one the system chose for 0). */
  readonly port: number;
  /** Stops listening and ends every open connection (a watch would otherwise keep close() waiting). */
  close(): Promise<void>;
}

export function startTcpRelay(
  listen: { readonly host: string; readonly port: number },
  target: () => number,
): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: target() });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listen.host, port: listen.port, exclusive: true }, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : listen.port,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
