import { describe, expect, it } from 'vitest';
import { Agent, request } from 'node:https';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createServer, type NodeServer } from '../../../src/http/server.js';
import { GATEWAY_SERVER_LIMITS } from '../../../src/http/server-limits.js';
import { testGatewayTls } from '../../support/gateway-tls.js';

type Answer = { status: number; connection: string | undefined; socketReused: boolean };

/** A POST over `agent` (one kept-alive connection), with what the answer said about the connection. */
function post(port: number, agent: Agent | HttpAgent, tls: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = tls ? request : httpRequest;
    const req = send({ host: '127.0.0.1', port, method: 'POST', path: '/', agent }, (res) => {
      res
        .resume()
        .on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, socketReused: req.reusedSocket }),
        );
    });
    req.on('error', reject);
    req.end('{}');
  });
}

async function listening(server: NodeServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A port that drains for 5 s, listening, and one kept-alive connection's agent to it. */
async function drainingPort(tls: boolean): Promise<{ server: NodeServer; port: number; agent: Agent | HttpAgent }> {
  const pair = tls ? await testGatewayTls() : undefined;
  const server = createServer({
    limits: GATEWAY_SERVER_LIMITS,
    tls: pair === undefined ? undefined : { cert: pair.cert, key: pair.key },
    drainMs: 5_000,
    onRequest: (_req, res) => res.end('ok'),
  });
  const port = await listening(server);
  const agent = tls
    ? new Agent({ keepAlive: true, maxSockets: 1, ca: pair?.ca })
    : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  return { server, port, agent };
}

describe('a port that drains before it closes', () => {
  for (const tls of [false, true]) {
    it(`answers a kept-alive HTTP/1.1 client "Connection: close" once close() is called, then closes (${tls ? 'TLS' : 'plain'})`, async () => {
      const { server, port, agent } = await drainingPort(tls);
      const before = await post(port, agent, tls);
      expect(before).toMatchObject({ status: 200, socketReused: false });
      expect(before.connection).not.toBe('close');

      const started = Date.now();
      const closed = new Promise((resolve) => server.close(resolve));
      // The kept-alive connection still serves, and its answer tells the client not to use it again.
      const during = await post(port, agent, tls);
      expect(during).toEqual({ status: 200, connection: 'close', socketReused: true });
      await closed;
      // The port closed once that connection had gone, not after the whole drain period.
      expect(Date.now() - started).toBeLessThan(4_000);
      agent.destroy();
    });
  }

  for (const tls of [false, true]) {
    it(`keeps an idle kept-alive connection through the drain when closeIdleConnections() comes first, as fastify calls it (${tls ? 'TLS' : 'plain'})`, async () => {
      const { server, port, agent } = await drainingPort(tls);
      await post(port, agent, tls);
      (server as { closeIdleConnections(): void }).closeIdleConnections();
      const closed = new Promise((resolve) => server.close(resolve));
      // Long enough for the client to see the connection end, had it been closed.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await post(port, agent, tls)).toEqual({ status: 200, connection: 'close', socketReused: true });
      await closed;
      agent.destroy();
    });
  }

  for (const tls of [false, true]) {
    it(`closes a connection that never began a request, as Go's http.Transport leaves one parked idle for 90 s (${tls ? 'TLS' : 'plain'})`, async () => {
      const { server, port, agent } = await drainingPort(tls);
      // Node 20's own close() waits for such a connection until the client ends it (nodejs/node#63452).
      const parked: Socket = await new Promise((resolve) => {
        const socket: Socket = tls
          ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () =>
              resolve(socket),
            )
          : tcpConnect({ host: '127.0.0.1', port }, () => resolve(socket));
      });
      const ended = new Promise((resolve) => parked.once('close', resolve));
      // The server has accepted it (and finished the handshake) before close().
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      await new Promise((resolve) => server.close(resolve));
      await ended;
      expect(Date.now() - started).toBeLessThan(2_000);
      agent.destroy();
    });
  }

  it('closes at once when no HTTP/1.1 connection is open, and waits at most drainMs for one that stays idle', async () => {
    const server = createServer({ limits: GATEWAY_SERVER_LIMITS, drainMs: 300, onRequest: (_req, res) => res.end() });
    const port = await listening(server);
    let started = Date.now();
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    await post(port, agent, false);
    started = Date.now();
    await new Promise((resolve) => server.close(resolve));
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(3_000);
    agent.destroy();

    const quiet = createServer({ limits: GATEWAY_SERVER_LIMITS, drainMs: 10_000, onRequest: (_req, res) => res.end() });
    await listening(quiet);
    started = Date.now();
    await new Promise((resolve) => quiet.close(resolve));
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
