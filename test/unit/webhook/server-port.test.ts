/**
 * The webhook server on the server factory's port: HTTP/1.1 alone, which the kube-apiserver's webhook client then
 * speaks (test/integration/webhook runs the real one against it), the port's duplicate-Host refusal in the webhook's
 * own error form, and a prompt close with the apiserver's connections still open.
 */
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

function post(
  agent: Agent,
  body: string | Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/validate',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  server = await start();
});

afterAll(async () => {
  await server.close();
});

describe('the webhook port', () => {
  it('offers HTTP/1.1 alone, as controller-runtime webhook servers do by default', async () => {
    const protocol = await new Promise<string | false | null>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: server.port, ca, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
        resolve(socket.alpnProtocol);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(protocol).toBe('http/1.1');
  });

  it('answers reviews on a kept-alive connection, and a body over the limit with 413 and that connection closed', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
    try {
      const allowed = await post(agent, JSON.stringify(admissionReview({ uid: 'k-1', object: widget({ id: 'a' }) })));
      expect(allowed.status).toBe(200);
      expect(allowed.json.response).toEqual({ uid: 'k-1', allowed: true });
      expect(allowed.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const tooLarge = await post(agent, Buffer.alloc(65 * 1024, 0x20));
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.headers.connection).toBe('close');
      expect(tooLarge.json).toMatchObject({ kind: 'Status', code: 413, reason: 'RequestEntityTooLarge' });
      const again = await post(agent, JSON.stringify(admissionReview({ uid: 'k-2', object: widget({ id: 'a' }) })));
      expect(again.json.response).toEqual({ uid: 'k-2', allowed: true });
    } finally {
      agent.destroy();
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

  it('closes within its drain when a review was in flight, and answers it', async () => {
    const other = await start();
    const agent = new Agent({ keepAlive: true, ca });
    try {
      let closed: Promise<void> | undefined;
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: other.port, path: '/validate', method: 'POST', agent },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.setHeader('content-type', 'application/json');
        const body = JSON.stringify(admissionReview({ uid: 'late', object: widget({ id: 'a' }) }));
        // Half the body, then the close, then the rest: the review is in flight when the port starts to close.
        req.write(body.slice(0, 20));
        setTimeout(() => {
          closed = other.close();
          setTimeout(() => req.end(body.slice(20)), 50);
        }, 100);
      });
      expect(status).toBe(200);
      const started = Date.now();
      await closed;
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      agent.destroy();
    }
  });

  it('closes within its drain with a kept-alive connection open', async () => {
    const other = await start();
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
    expect(Date.now() - started).toBeLessThan(3_000);
    agent.destroy();
  });
});
