import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPort, distinctFreePorts, isPortConflict } from '../../../../dev/cluster/ports.js';

describe('freeLoopbackPort', () => {
  it('returns a port that can then be bound on 127.0.0.1', async () => {
    const port = await freeLoopbackPort();
    expect(port).toBeGreaterThan(1023);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port }, resolve);
    });
    await new Promise((r) => server.close(r));
  });

  it('hands out distinct ports', async () => {
    const ports = await distinctFreePorts(5);
    expect(new Set(ports).size).toBe(5);
  });

  it('asks its picker again until the ports are distinct', async () => {
    const answers = [7001, 7001, 7002, 7001, 7003];
    const ports = await distinctFreePorts(3, async () => answers.shift() ?? 0);
    expect(ports).toEqual([7001, 7002, 7003]);
  });
});

describe('isPortConflict', () => {
  it('recognises etcd and apiserver bind failures', () => {
    expect(isPortConflict('listen tcp 127.0.0.1:2379: bind: address already in use')).toBe(true);
    expect(
      isPortConflict('failed to listen on 127.0.0.1:6443: listen tcp 127.0.0.1:6443: bind: address already in use'),
    ).toBe(true);
    expect(isPortConflict('error: unable to load server certificate')).toBe(false);
  });

  it("recognises uvicorn's and grpcio's bind failures (the real model servers)", () => {
    expect(
      isPortConflict(
        "ERROR:    [Errno 98] error while attempting to bind on address ('198.19.255.2', 41233): address already in use",
      ),
    ).toBe(true);
    expect(
      isPortConflict(
        'RuntimeError: Failed to bind to address 198.19.255.2:40125; set GRPC_VERBOSITY=debug environment variable to see detailed error message.',
      ),
    ).toBe(true);
  });
});
