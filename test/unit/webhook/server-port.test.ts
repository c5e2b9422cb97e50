/**
 * The webhook server on the server factory's port: HTTP/2, which the kube-apiserver's webhook client speaks when
 * ALPN offers it (test/integration/webhook runs the real one against it), the port's duplicate-Host refusal in the
 * webhook's own error form, and a prompt close with the apiserver's connections still open.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { issueCertificates, servingIdentity } from '../../../src/webhook/certificates.js';
import { startWebhookServer, type WebhookServer } from '../../../src/webhook/server.js';
import { admissionReview, widget, widgetKind } from './fixtures.js';

let server: WebhookServer;
let ca: string;

async function start(): Promise<WebhookServer> {
  return startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    tls: await certificate(),
    options: defaultValidationOptions,
    log: pino({ level: 'silent' }),
    kinds: [widgetKind],
    maxBodyBytes: 64 * 1024,
  });
}

async function certificate(): Promise<{ cert: string; key: string }> {
  const identity = servingIdentity('svc', 'ns', { host: '127.0.0.1' });
  const certs = await issueCertificates({ action: 'renew-all', reason: 'test' }, undefined, identity, new Date(), {
    caDays: 10,
    servingDays: 5,
  });
  ca = certs.caBundle;
  return { cert: certs.cert, key: certs.key };
}

function h2Post(
  session: ClientHttp2Session,
  body: string | Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': '/validate', 'content-type': 'application/json' });
    let status = 0;
    let headers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      headers = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () =>
      resolve({ status, headers, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }),
    );
    stream.on('error', reject);
    stream.end(body);
  });
}

beforeAll(async () => {
  server = await start();
});

afterAll(async () => {
  await server.close();
});

describe('the webhook port', () => {
  it('answers reviews over HTTP/2, and a body over the limit with 413 on its stream alone', async () => {
    const session = connect(`https://127.0.0.1:${server.port}`, { ca });
    try {
      const allowed = await h2Post(
        session,
        JSON.stringify(admissionReview({ uid: 'h2-1', object: widget({ id: 'a' }) })),
      );
      expect(allowed.status).toBe(200);
      expect(allowed.json.response).toEqual({ uid: 'h2-1', allowed: true });
      expect(allowed.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const tooLarge = await h2Post(session, Buffer.alloc(65 * 1024, 0x20));
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.json).toMatchObject({ kind: 'Status', code: 413, reason: 'RequestEntityTooLarge' });
      const again = await h2Post(
        session,
        JSON.stringify(admissionReview({ uid: 'h2-2', object: widget({ id: 'a' }) })),
      );
      expect(again.json.response).toEqual({ uid: 'h2-2', allowed: true });
    } finally {
      session.close();
    }
  });

  it('refuses two Host headers with a Status naming RFC 9112', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: server.port, ca }, () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    expect(body).toMatchObject({ kind: 'Status', status: 'Failure', code: 400, reason: 'BadRequest' });
    expect(String(body.message)).toContain('RFC 9112');
  });

  it('serves a renewed certificate to new connections (setTls), without a restart', async () => {
    const other = await start();
    const firstCa = ca;
    const trusts = (bundle: string): Promise<boolean> =>
      new Promise((resolve) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: other.port, ca: bundle }, () => {
          socket.end();
          resolve(true);
        });
        socket.on('error', () => resolve(false));
      });
    try {
      expect(await trusts(firstCa)).toBe(true);
      other.setTls(await certificate());
      expect(ca).not.toBe(firstCa);
      expect(await trusts(ca)).toBe(true);
      expect(await trusts(firstCa)).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('closes at once with an HTTP/2 session and a kept-alive HTTP/1.1 connection open', async () => {
    const other = await start();
    const session = connect(`https://127.0.0.1:${other.port}`, { ca });
    await h2Post(session, JSON.stringify(admissionReview({ object: widget({ id: 'a' }) })));
    const agent = new Agent({ keepAlive: true, ca });
    await new Promise<void>((resolve, reject) =>
      request({ host: '127.0.0.1', port: other.port, path: '/healthz', agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end(),
    );
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    agent.destroy();
    session.destroy();
  });
});
