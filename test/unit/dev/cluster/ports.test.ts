import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPort, freeLoopbackPorts, isPortConflict } from '../../../../dev/cluster/ports.js';

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
    const ports = await freeLoopbackPorts(5);
    expect(new Set(ports).size).toBe(5);
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
});
