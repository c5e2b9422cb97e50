import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { closesRatherThanReads, closeWithoutReading } from '../../../src/http/unread-body.js';

const LARGE = 256 * 1024;
const body = (headers: Record<string, string>, over: { complete?: boolean; awaitingContinue?: boolean } = {}) => ({
  headers,
  complete: over.complete ?? false,
  awaitingContinue: over.awaitingContinue ?? false,
});

describe('closesRatherThanReads', () => {
  it('closes for a large declared body that has not arrived, and reads a smaller one', () => {
    expect(closesRatherThanReads(body({ 'content-length': String(LARGE) }), LARGE)).toBe(true);
    expect(closesRatherThanReads(body({ 'content-length': '1440000' }), LARGE)).toBe(true);
    expect(closesRatherThanReads(body({ 'content-length': String(LARGE - 1) }), LARGE)).toBe(false);
  });

  it('reads nothing when there is no body or it has all arrived', () => {
    expect(closesRatherThanReads(body({}), LARGE)).toBe(false);
    expect(closesRatherThanReads(body({ 'content-length': '0' }), LARGE)).toBe(false);
    expect(closesRatherThanReads(body({ 'content-length': '1440000' }, { complete: true }), LARGE)).toBe(false);
  });

  it('closes for a chunked body, whose length is unknown', () => {
    expect(closesRatherThanReads(body({ 'transfer-encoding': 'chunked' }), LARGE)).toBe(true);
  });

  it('closes for any body the client holds back until 100 Continue, however small', () => {
    expect(closesRatherThanReads(body({ 'content-length': '20' }, { awaitingContinue: true }), LARGE)).toBe(true);
    expect(closesRatherThanReads(body({ 'content-length': '0' }, { awaitingContinue: true }), LARGE)).toBe(false);
  });
});

describe('closeWithoutReading', () => {
  it('answers, reads no more of the body, and drops what had arrived of it while the connection lingers', async () => {
    const refused: IncomingMessage[] = [];
    const server = http.createServer((req, res) => {
      refused.push(req);
      closeWithoutReading(req, res, 60_000);
      res.writeHead(429, { 'content-type': 'application/json' }).end('{"error":{"code":429}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ connections: 1 });
    try {
      const { port } = server.address() as AddressInfo;
      const res = await request(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        dispatcher: agent,
        body: Buffer.alloc(1_400_000, 32),
      });
      expect(await res.body.text()).toBe('{"error":{"code":429}}');
      expect(res.statusCode).toBe(429);
      expect(res.headers.connection).toBe('close');
      await new Promise((r) => setTimeout(r, 300));
      const req = refused[0] as IncomingMessage;
      // One socket read at most, none of it still held, and the socket not reset but lingering.
      expect(req.socket.bytesRead).toBeLessThan(200_000);
      expect(req.readableLength).toBe(0);
      expect(req.socket.destroyed).toBe(false);
    } finally {
      for (const req of refused) req.socket.destroy();
      await agent.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
