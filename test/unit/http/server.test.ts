import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { createServer, type NodeServer } from '../../../src/http/server.js';
import { GATEWAY_SERVER_LIMITS } from '../../../src/http/server-limits.js';
import { testGatewayTls, type TestGatewayTls } from '../../support/gateway-tls.js';

let tls: TestGatewayTls;
let server: NodeServer;
let port = 0;
const tlsErrors: string[] = [];

beforeAll(async () => {
  tls = await testGatewayTls();
  server = createServer({
    limits: GATEWAY_SERVER_LIMITS,
    tls: { cert: tls.cert, key: tls.key },
    http2Limits: { maxConcurrentStreams: 4, maxHeaderListSize: 8 * 1024, maxSessionMemoryMb: 8 },
    onRequest: (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`HTTP/${req.httpVersion}`);
    },
    onTlsError: (client) => tlsErrors.push(client),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function h2Get(session: ReturnType<typeof connect>, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': '/', ...headers });
    let body = '';
    stream.setEncoding('utf8').on('data', (c: string) => (body += c));
    stream.on('end', () => resolve(body));
    stream.on('error', reject);
    stream.end();
  });
}

describe('createServer with TLS', () => {
  it('answers HTTP/1.1 and HTTP/2 on one port, chosen by ALPN', async () => {
    const agent = new Agent({ connect: { ca: tls.ca } });
    const res = await request(`https://localhost:${port}/`, { dispatcher: agent });
    expect(await res.body.text()).toBe('HTTP/1.1');
    await agent.close();
    const session = connect(`https://localhost:${port}`, { ca: tls.ca });
    expect(await h2Get(session)).toBe('HTTP/2.0');
    session.close();
  });

  it('advertises its stream limit and refuses a header list over its bound', async () => {
    const session = connect(`https://localhost:${port}`, { ca: tls.ca });
    await new Promise((resolve) => session.once('remoteSettings', resolve));
    expect(session.remoteSettings.maxConcurrentStreams).toBe(4);
    await expect(h2Get(session, { 'x-big': 'a'.repeat(16 * 1024) })).rejects.toThrow();
    session.destroy();
  });

  it('hears a handshake refused by an untrusting client once per client address', async () => {
    tlsErrors.length = 0;
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => {
        const session = connect(`https://localhost:${port}`);
        session.on('error', () => resolve());
      });
    }
    expect(tlsErrors).toHaveLength(1);
  });

  it('closes open HTTP/2 sessions when the port closes', async () => {
    const other = createServer({
      limits: GATEWAY_SERVER_LIMITS,
      tls: { cert: tls.cert, key: tls.key },
      onRequest: (_req, res) => res.end('ok'),
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const session = connect(`https://localhost:${(other.address() as AddressInfo).port}`, { ca: tls.ca });
    await h2Get(session);
    const closed = new Promise((resolve) => session.once('close', resolve));
    await new Promise((resolve) => other.close(resolve));
    await closed;
  });
});
