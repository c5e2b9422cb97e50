import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotate, type AccessLine, type PortRefusal } from '../../../src/http/front-door.js';
import { requestIdOf } from '../../../src/http/request-id.js';
import { GATEWAY_SERVER_LIMITS } from '../../../src/http/server-limits.js';
import { createServer, type NodeServer } from '../../../src/http/server.js';
import { testGatewayTls, type TestGatewayTls } from '../../support/gateway-tls.js';

const lines: { line: AccessLine; annotations: Readonly<Record<string, unknown>> | undefined }[] = [];
const refusals: PortRefusal[] = [];
const handled: string[] = [];
let tls: TestGatewayTls;
let plain: NodeServer;
let secure: NodeServer;

function start(withTls: boolean): Promise<NodeServer> {
  const server = createServer({
    limits: GATEWAY_SERVER_LIMITS,
    ...(withTls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
    front: {
      refuse: (_req, res, refusal) => {
        refusals.push(refusal);
        res.writeHead(refusal.status, { 'content-type': 'text/plain' }).end(`refused: ${refusal.reason}`);
      },
      log: (line, annotations) => lines.push({ line, annotations }),
    },
    onRequest: (req, res) => {
      const id = requestIdOf(req);
      handled.push(id);
      if (req.url?.startsWith('/annotated?') === true) annotate(res, { decision: 'allowed' });
      res.writeHead(200, { 'content-type': 'text/plain' }).end(id);
    },
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const portOf = (server: NodeServer): number => (server.address() as AddressInfo).port;

/** The raw answer to `head` (HTTP/1.1 with Connection: close): two Host headers cannot be sent by a client library. */
function rawHttp(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let text = '';
    socket.setEncoding('utf8').on('data', (c: string) => (text += c));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.connect(portOf(plain), '127.0.0.1', () => socket.write(head));
  });
}

beforeAll(async () => {
  tls = await testGatewayTls();
  [plain, secure] = await Promise.all([start(false), start(true)]);
});

afterAll(async () => {
  await Promise.all([plain, secure].map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('a port with a front door', () => {
  it("answers with the caller's sane request id, the one the handler and the access line name", async () => {
    lines.length = 0;
    const answer = await rawHttp(
      'GET /annotated?secret=1 HTTP/1.1\r\nHost: a\r\nX-Request-Id: caller-7\r\nConnection: close\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain('x-request-id: caller-7');
    expect(answer).toMatch(/\r\n\r\n(8\r\n)?caller-7/);
    expect(lines).toEqual([
      {
        line: expect.objectContaining({
          requestId: 'caller-7',
          method: 'GET',
          path: '/annotated',
          status: 200,
          httpVersion: '1.1',
          finished: true,
        }),
        annotations: { decision: 'allowed' },
      },
    ]);
  });

  it('gives a request without a sane id a new one, the same in the answer and the handler', async () => {
    const answer = await rawHttp('GET / HTTP/1.1\r\nHost: a\r\nX-Request-Id: bad id\r\nConnection: close\r\n\r\n');
    const id = /x-request-id: (\S+)/i.exec(answer)?.[1];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(handled.at(-1)).toBe(id);
  });

  it("refuses two Host headers through the API's renderer, before its handler", async () => {
    const before = handled.length;
    refusals.length = 0;
    const answer = await rawHttp('GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('refused: DuplicateHost');
    expect(refusals).toEqual([
      expect.objectContaining({ status: 400, reason: 'DuplicateHost', message: expect.stringContaining('RFC 9112') }),
    ]);
    expect(handled.length).toBe(before);
  });

  it('does the same on a TLS port over HTTP/2', async () => {
    lines.length = 0;
    const session = connect(`https://localhost:${portOf(secure)}`, { ca: tls.ca });
    const { id, body } = await new Promise<{ id: unknown; body: string }>((resolve, reject) => {
      const stream = session.request({ ':path': '/', 'x-request-id': 'h2-call' });
      let id: unknown;
      let body = '';
      stream.on('response', (headers) => (id = headers['x-request-id']));
      stream.setEncoding('utf8').on('data', (c: string) => (body += c));
      stream.on('end', () => resolve({ id, body }));
      stream.on('error', reject);
      stream.end();
    });
    session.close();
    expect({ id, body }).toEqual({ id: 'h2-call', body: 'h2-call' });
    expect(lines.map((l) => [l.line.requestId, l.line.httpVersion, l.annotations])).toEqual([
      ['h2-call', '2.0', undefined],
    ]);
  });
});
