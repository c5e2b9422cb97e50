import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

describe('endpoint-operator dev with a taken port', { timeout: 60_000 }, () => {
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
    const r = await runCli(['dev', '--signin-port', String(port)], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`dev: port ${port} on 127.0.0.1 (the sign-in API) is in use: choose another with --signin-port PORT (0 = any free port)`);
    expect(r.stderr).not.toContain('starting the local control plane');
  });

  it('checks the gateway and the demo model servers too, each with its own flag', async () => {
    const gateway = await runCli(['dev', '--signin-port', '0', '--gateway-port', String(port)], { timeoutMs: 30_000 });
    expect(gateway.code, gateway.stderr).toBe(2);
    expect(gateway.stderr).toContain(`dev: port ${port} on 127.0.0.1 (the prediction gateway) is in use: choose another with --gateway-port PORT`);
    const model = await runCli(['dev', '--signin-port', '0', '--gateway-port', '0', '--model-ports', `0,${port}`], { timeoutMs: 30_000 });
    expect(model.code, model.stderr).toBe(2);
    expect(model.stderr).toContain(`dev: port ${port} on 127.0.0.1 (the demo model server of Service fraud-dnn) is in use: choose another with --model-ports PORT`);
    expect(model.stderr).not.toContain('starting the local control plane');
  });
});
