import { request } from 'node:https';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { issueCertificates, servingIdentity } from '../../../src/webhook/certificates.js';
import type { ConverterTable } from '../../../src/webhook/converters.js';
import { startWebhookServer, type WebhookServer } from '../../../src/webhook/server.js';
import { admissionReview, widget, widgetKind } from './fixtures.js';

const logLines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

const renameToV2: ConverterTable = {
  'test.endpoint-operator.dev/Widget': (obj, desired) => ({
    ok: true,
    object: { ...(obj as Record<string, unknown>), apiVersion: desired },
  }),
};

let server: WebhookServer;
let ca: string;

beforeAll(async () => {
  const identity = servingIdentity('svc', 'ns', { host: '127.0.0.1' });
  const certs = await issueCertificates({ action: 'renew-all', reason: 'test' }, undefined, identity, new Date(), {
    caDays: 10,
    servingDays: 5,
  });
  ca = certs.caBundle;
  server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    tls: { cert: certs.cert, key: certs.key },
    options: defaultValidationOptions,
    log: pino({ level: 'info' }, sink),
    kinds: [widgetKind],
    converters: renameToV2,
    maxBodyBytes: 64 * 1024,
  });
});

afterAll(async () => {
  await server.close();
});

function call(
  method: string,
  path: string,
  body?: string | Buffer,
  contentType = 'application/json',
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        ca,
        headers: body === undefined ? {} : { 'content-type': contentType },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const post = (path: string, body: unknown) => call('POST', path, JSON.stringify(body));

describe('webhook server', () => {
  it('answers an AdmissionReview over TLS with the CA it was issued from, and logs one line without the object', async () => {
    logLines.length = 0;
    const res = await post(
      '/validate?timeout=5s',
      admissionReview({ uid: 'u-allowed', object: widget({ id: 'a', secret: 'do-not-log' }) }),
    );
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-allowed', allowed: true },
    });
    expect(logLines).toHaveLength(1);
    expect(logLines[0]).toMatchObject({
      uid: 'u-allowed',
      kind: 'Widget',
      name: 'w1',
      namespace: 'ns1',
      decision: 'allowed',
      operation: 'CREATE',
    });
    expect(JSON.stringify(logLines[0])).not.toContain('do-not-log');
  });

  it('denies with causes and logs the decision', async () => {
    logLines.length = 0;
    const res = await post('/validate', admissionReview({ uid: 'u-denied', object: widget({ port: -1 }) }));
    const response = res.json.response as { allowed: boolean; status: { code: number; message: string } };
    expect(response.allowed).toBe(false);
    expect(response.status.code).toBe(422);
    expect(response.status.message).toContain('spec.port: Invalid value: -1');
    expect(logLines[0]).toMatchObject({ uid: 'u-denied', decision: 'denied', causes: 2 });
  });

  it('converts a ConversionReview', async () => {
    const res = await post('/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'c1', desiredAPIVersion: 'test.endpoint-operator.dev/v2', objects: [widget({ id: 'a' })] },
    });
    expect(res.status).toBe(200);
    expect(res.json.response).toEqual({
      uid: 'c1',
      result: { status: 'Success' },
      convertedObjects: [{ ...widget({ id: 'a' }), apiVersion: 'test.endpoint-operator.dev/v2' }],
    });
  });

  const bad: [string, () => Promise<{ status: number; json: Record<string, unknown> }>, number, string][] = [
    ['invalid JSON', () => call('POST', '/validate', '{"apiVersion":'), 400, 'not valid JSON'],
    ['an empty body', () => call('POST', '/validate', ''), 400, 'empty'],
    [
      'a review without a request',
      () => post('/validate', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      400,
      'malformed AdmissionReview: request',
    ],
    [
      'a ConversionReview sent to /validate',
      () => post('/validate', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: {} }),
      400,
      'malformed AdmissionReview',
    ],
    [
      'a ConversionReview without objects',
      () =>
        post('/convert', {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: { uid: 'x', desiredAPIVersion: 'a/v1' },
        }),
      400,
      'request.objects',
    ],
    ['a JSON array', () => post('/convert', [1, 2]), 400, 'malformed ConversionReview'],
    [
      'a body over the limit',
      () => call('POST', '/validate', Buffer.alloc(65 * 1024, 0x20)),
      413,
      'exceeds the limit of 65536 bytes',
    ],
    [
      'a non-JSON content type',
      () => call('POST', '/validate', 'x', 'text/plain'),
      415,
      'content-type must be application/json',
    ],
    ['an unknown path', () => post('/mutating', {}), 404, 'no webhook at /mutating'],
    ['a malformed review sent to /mutate', () => post('/mutate', {}), 400, 'malformed AdmissionReview'],
    ['a GET of a webhook path', () => call('GET', '/validate'), 405, 'only POST'],
  ];
  for (const [what, send, status, message] of bad) {
    it(`answers ${what} with ${status} and a message, and keeps serving`, async () => {
      logLines.length = 0;
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', code: status });
      expect(String(res.json.message)).toContain(message);
      expect(logLines[0]).toMatchObject({ code: status, decision: 'error' });
      expect((await call('GET', '/healthz')).status).toBe(200);
    });
  }

  it('refuses a chunked body that grows over the limit without a content-length', async () => {
    const res = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/validate',
          ca,
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write(Buffer.alloc(8 * 1024, 0x20));
      req.end();
    });
    expect(res).toBe(413);
  });
});

describe('webhook server: an internal error', () => {
  it('is answered 500 with the request id, and logged once with the route, the id, the cause and its stack', async () => {
    const identity = servingIdentity('svc', 'ns', { host: '127.0.0.1' });
    const certs = await issueCertificates({ action: 'renew-all', reason: 'test' }, undefined, identity, new Date(), {
      caDays: 10,
      servingDays: 5,
    });
    // A kind table that fails when the mutating webhook reads it: the fault is inside the server, not in the request.
    const broken = Object.defineProperty({ ...widgetKind }, 'finalizer', {
      get: () => {
        throw new RangeError('forced kind-table fault');
      },
    });
    const faulty = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      tls: { cert: certs.cert, key: certs.key },
      options: defaultValidationOptions,
      log: pino({ level: 'info' }, sink),
      kinds: [broken],
    });
    try {
      const before = logLines.length;
      const status = await new Promise<{ code: number; id: string | undefined }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: faulty.port,
            method: 'POST',
            path: '/mutate',
            ca: certs.caBundle,
            headers: { 'content-type': 'application/json', 'x-request-id': 'apiserver-42' },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({ code: res.statusCode ?? 0, id: res.headers['x-request-id'] as string | undefined }),
            );
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(admissionReview({ object: widget({}) })));
      });
      expect(status).toEqual({ code: 500, id: 'apiserver-42' });
      const errors = logLines.slice(before).filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        server: 'webhook',
        route: '/mutate',
        requestId: 'apiserver-42',
        status: 500,
        cause: 'RangeError',
        msg: 'request failed with a server error',
      });
      expect((errors[0]?.err as { stack: string }).stack).toContain('forced kind-table fault');
    } finally {
      await faulty.close();
    }
  });

  it('refuses JSON nested deeper than the limit with 400 naming it', async () => {
    const res = await call('POST', '/validate', `{"request":${'['.repeat(5_000)}${']'.repeat(5_000)}}`);
    expect(res.status).toBe(400);
    expect(res.json.message).toContain('nested more than 100 levels deep');
  });

  it('answers a review whose object nests too deeply with a refusal naming the limit (what the apiserver relays), not a webhook failure', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const res = await call(
      'POST',
      '/validate',
      JSON.stringify(admissionReview({ object: '@', uid: 'deep-1' })).replace('"@"', deep),
    );
    expect(res.status).toBe(200);
    expect(res.json.response).toEqual({
      uid: 'deep-1',
      allowed: false,
      status: { code: 400, reason: 'BadRequest', message: expect.stringContaining('nested more than 100 levels deep') },
    });
  });
});
