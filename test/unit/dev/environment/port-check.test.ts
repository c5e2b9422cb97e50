import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portProblems } from '../../../../dev/environment/port-check.js';

describe('dev port check', () => {
  let taken: Server;
  let takenPort = 0;

  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = taken.address();
    takenPort = typeof address === 'object' && address !== null ? address.port : 0;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  it('answers a taken port with the flag that changes it', async () => {
    const problems = await portProblems([
      { what: 'the sign-in API', host: '127.0.0.1', port: takenPort, flag: '--signin-port' },
      { what: 'the gateway', host: '127.0.0.1', port: 0, flag: '--gateway-port' },
    ]);
    expect(problems).toEqual([
      `port ${takenPort} on 127.0.0.1 (the sign-in API) is in use: choose another with --signin-port PORT (0 = any free port)`,
    ]);
  });

  it('passes free ports and any-port (0), and leaves them free', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = probe.address();
    const free = typeof address === 'object' && address !== null ? address.port : 0;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    expect(
      await portProblems([
        { what: 'the gateway', host: '127.0.0.1', port: free, flag: '--gateway-port' },
        { what: 'webhooks', host: '127.0.0.1', port: 0, flag: '--webhook-port' },
      ]),
    ).toEqual([]);
    expect(
      await portProblems([{ what: 'the gateway', host: '127.0.0.1', port: free, flag: '--gateway-port' }]),
    ).toEqual([]);
  });

  it('refuses one port planned for two servers', async () => {
    const problems = await portProblems([
      { what: 'the sign-in API', host: '127.0.0.1', port: 45999, flag: '--signin-port' },
      { what: 'the gateway', host: '127.0.0.1', port: 45999, flag: '--gateway-port' },
    ]);
    expect(
      problems.some((p) =>
        p.startsWith(
          'port 45999 is planned twice (the sign-in API, --signin-port; and the gateway): change it with --gateway-port PORT',
        ),
      ),
    ).toBe(true);
  });
});
