/**
 * The Go client program itself (tools/vertex-go-client), before the gateway's gRPC services exist to call:
 * built through the wrapper-module cache, it dials a TLS port trusting only the CA it is given, negotiates
 * HTTP/2 by ALPN, sends the bearer token as `authorization` metadata on the Vertex method paths, and reports a
 * gRPC status as JSON. The listener here is node:http2 answering every call as gRPC does when it refuses one
 * (a Trailers-Only response, grpc-status 16): enough to see what the client sends, not a gateway.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATEWAY_TLS, ensureGatewayCertificate } from '../../../src/operator/gateway-certificate.js';
import { runVertexGoClient } from '../../support/vertex-go-client.js';
import { FakeApi } from '../../unit/webhook/fake-api.js';

interface Seen {
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  alpn: string | false | null;
}

describe('tools/vertex-go-client', () => {
  let dir: string;
  let server: Http2SecureServer;
  let address: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'eo-vertex-go-'));
    const certs = await ensureGatewayCertificate(new FakeApi(), { ...DEFAULT_GATEWAY_TLS, namespace: 'eo-system' });
    await writeFile(join(dir, 'ca.crt'), certs.caBundle);
    server = createSecureServer({ cert: certs.cert, key: certs.key, allowHTTP1: true });
    server.on('stream', (stream, headers) => {
      seen.push({
        path: String(headers[':path']),
        authorization: headers.authorization,
        contentType: headers['content-type'],
        alpn: stream.session?.alpnProtocol ?? null,
      });
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'token%20refused' },
        { endStream: true },
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('calls Predict and GetEndpoint over gRPC with TLS from the CA file and the bearer token, and reports the status', async () => {
    const endpoint = 'projects/endpoint-demo/locations/us-central1/endpoints/fraud';
    const answers = await runVertexGoClient({
      address,
      caFile: join(dir, 'ca.crt'),
      token: 'token-from-a-serviceaccount',
      calls: [
        { method: 'Predict', endpoint, instances: [[1, 2, 3, 4]], parameters: { threshold: 0.5 } },
        { method: 'GetEndpoint', name: endpoint },
      ],
    });
    expect(answers).toEqual([
      { method: 'Predict', error: { code: 16, message: 'token refused' } },
      { method: 'GetEndpoint', error: { code: 16, message: 'token refused' } },
    ]);
    expect(seen.map((s) => s.path)).toEqual([
      '/google.cloud.aiplatform.v1.PredictionService/Predict',
      '/google.cloud.aiplatform.v1.EndpointService/GetEndpoint',
    ]);
    for (const s of seen) {
      expect(s.authorization).toBe('Bearer token-from-a-serviceaccount');
      expect(s.contentType).toBe('application/grpc');
      expect(s.alpn).toBe('h2');
    }
  }, 1_800_000);

  it('refuses a server its CA file does not vouch for', async () => {
    const other = await ensureGatewayCertificate(new FakeApi(), { ...DEFAULT_GATEWAY_TLS, namespace: 'elsewhere' });
    await writeFile(join(dir, 'other-ca.crt'), other.caBundle);
    const before = seen.length;
    const [answer] = await runVertexGoClient({
      address,
      caFile: join(dir, 'other-ca.crt'),
      token: 't',
      timeoutSeconds: 5,
      calls: [{ method: 'GetEndpoint', name: 'projects/p/locations/l/endpoints/e' }],
    });
    expect(answer?.error?.code).toBe(14);
    expect(answer?.error?.message).toMatch(/certificate/);
    expect(seen.length).toBe(before);
  }, 1_800_000);
});
