import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the kernel picks it (bind to port 0), so concurrent runs
 * get different ports. Another process can still take it before our child binds it, so callers retry on
 * "address already in use".
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('the kernel returned no port'))));
    });
  });
}

/** `count` distinct ports, each free a moment ago: from `pick`, a free loopback port unless it is given. */
export async function distinctFreePorts(
  count: number,
  pick: () => Promise<number> = freeLoopbackPort,
): Promise<number[]> {
  const ports = new Set<number>();
  // The kernel may hand back a port it just released; ask until we have distinct ones.
  for (let attempts = 0; ports.size < count && attempts < count * 20; attempts++) ports.add(await pick());
  if (ports.size < count) throw new Error(`could not find ${count} distinct free ports`);
  return [...ports];
}

/**
 * True when a child's log says it could not bind its port, so starting again on other ports may succeed: Go's and
 * Python's "address already in use", or gRPC's "Failed to bind to address" (grpcio's servers: MLServer, KServe).
 */
export function isPortConflict(logText: string): boolean {
  return /address already in use|bind: address in use|failed to bind to address/i.test(logText);
}
