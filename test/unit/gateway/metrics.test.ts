/**
 * The gateway's in-flight gauge (metrics.ts countInFlight) on real loopback servers: raised when a call arrives,
 * lowered once when its answer ends or its client goes away, over HTTP/1.1 and HTTP/2, each under its protocol.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { countInFlight, gatewayInFlight, type CallProtocol } from '../../../src/gateway/metrics.js';
import { metricValue } from '../../support/metric-value.js';

const inFlight = (protocol: CallProtocol): Promise<number> => metricValue(gatewayInFlight, { protocol });

/** Resolves once `check` holds (the server sees arrivals and closes a moment after the client acts). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the gauge never reached the expected value');
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server that counts each call and holds its answer until the test ends it. */
function holdingServer<S extends http.Server | http2.Http2Server>(
  server: S,
  protocol: CallProtocol,
): { server: S; held: { end(): void }[] } {
  const held: { end(): void }[] = [];
  server.on('request', (_req: unknown, res: http.ServerResponse | http2.Http2ServerResponse) => {
    countInFlight(protocol, res);
    held.push({ end: () => res.end('ok') });
  });
  return { server, held };
}

async function listen(server: http.Server | http2.Http2Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

describe('endpoint_operator_gateway_requests_in_flight', () => {
  it('exists at 0 for both protocols before any call', async () => {
    const data = await gatewayInFlight.get();
    expect(data.values.map((v) => v.labels['protocol']).sort()).toEqual(['grpc', 'rest']);
  });

  it('counts HTTP/1.1 calls from arrival until their answer ends, or until their client goes', async () => {
    const before = await inFlight('rest');
    const { server, held } = holdingServer(http.createServer(), 'rest');
    const port = await listen(server);
    const agent = new http.Agent({ keepAlive: true });
    closers.push(async () => agent.destroy());
    const answered = new Promise<number>((resolve, reject) =>
      http.get({ port, host: '127.0.0.1', agent }, (res) => resolve(res.statusCode ?? 0)).on('error', reject),
    );
    const abandoned = http.get({ port, host: '127.0.0.1' });
    abandoned.on('error', () => undefined);
    await until(async () => (await inFlight('rest')) === before + 2);

    held[0]?.end();
    expect(await answered).toBe(200);
    // The kept-alive connection stays open: the answer's end, not the connection's, lowers the gauge.
    await until(async () => (await inFlight('rest')) === before + 1);
    abandoned.destroy();
    await until(async () => (await inFlight('rest')) === before);
    expect(await inFlight('grpc')).toBe(0);
  });

  it('counts HTTP/2 streams under their protocol, each lowered once', async () => {
    const before = await inFlight('grpc');
    const { server, held } = holdingServer(http2.createServer(), 'grpc');
    const port = await listen(server);
    const session = http2.connect(`http://127.0.0.1:${port}`);
    closers.push(async () => void session.destroy());
    const streams = [0, 1, 2].map(() => session.request({ ':path': '/', ':method': 'POST' }));
    for (const s of streams) s.on('error', () => undefined);
    await until(async () => (await inFlight('grpc')) === before + 3);
    held[0]?.end();
    streams[1]?.close(http2.constants.NGHTTP2_CANCEL);
    await until(async () => (await inFlight('grpc')) === before + 1);
    session.destroy();
    await until(async () => (await inFlight('grpc')) === before);
    // Ending an answer whose stream is already gone lowers nothing twice.
    held[2]?.end();
    await new Promise((r) => setTimeout(r, 20));
    expect(await inFlight('grpc')).toBe(before);
  });
});
