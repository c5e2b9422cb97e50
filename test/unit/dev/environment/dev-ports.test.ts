import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../../dev/main.js';
import { callMain } from '../../../support/cli.js';

describe('endpoint-operator-dev start with a taken port', () => {
  let taken: Server;
  let port = 0;

  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = taken.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  it('stops before starting a control plane, naming the flag that moves the port', async () => {
    const r = await callMain(main, ['start', '--signin-port', String(port)]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `dev: port ${port} on 127.0.0.1 (the sign-in API) is in use: choose another with --signin-port PORT (0 = any free port)`,
    );
    expect(r.stderr).not.toContain('starting the local Kubernetes cluster');
  });

  it("checks the gateway too, with its own flag (the demo model servers listen in the model host's own namespace)", async () => {
    const gateway = await callMain(main, ['start', '--signin-port', '0', '--gateway-port', String(port)]);
    expect(gateway.code, gateway.stderr).toBe(2);
    expect(gateway.stderr).toContain(
      `dev: port ${port} on 127.0.0.1 (the prediction gateway) is in use: choose another with --gateway-port PORT`,
    );
    expect(gateway.stderr).not.toContain('starting the local Kubernetes cluster');
    const bad = await callMain(main, ['start', '--model-ports', '0,70000']);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain('--model-ports takes port numbers (0..65535), got 70000');
  });
});
