/**
 * Google's official Node clients with their defaults (gRPC over TLS, no `fallback`), against the gateway's TLS
 * port: @google-cloud/aiplatform's PredictionServiceClient and EndpointServiceClient, and
 * @google-cloud/service-directory's LookupServiceClient, trusting the gateway's CA through `sslCreds`.
 * The same port answers REST over HTTP/1.1 and HTTP/2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials as grpcCredentials } from '@grpc/grpc-js';
import { v1 as aiplatform } from '@google-cloud/aiplatform';
import { v1 as servicedirectory } from '@google-cloud/service-directory';
import http from 'node:http';
import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { RunningDemoModelServer } from '../../../dev/models/demo/index.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace } from '../../support/cluster.js';
import { testGatewayTls, type TestGatewayTls } from '../../support/gateway-tls.js';
import {
  apply,
  deployFraudSplit,
  CapturedLog,
  endpointManifest,
  listenInHost,
  serviceManifest,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

let env: GatewayEnv;
let servers: readonly RunningDemoModelServer[] = [];
let gateway: GatewayServer;
let port = 0;
let tls: TestGatewayTls;
let endpointName = '';
let streamingName = '';
let streamer: http.Server;
/** Resolves the streaming server's pending answer: it sends its last event only when the test says so. */
let finishStream: () => void = () => undefined;
const log = new CapturedLog();
const instance = { amount: 1800, hourOfDay: 2, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 9 };

/** google-gax's options for an endpoint on this machine with the gateway's CA; no Google credentials are looked for. */
function clientOptions() {
  return {
    apiEndpoint: '127.0.0.1',
    port,
    sslCreds: grpcCredentials.createSsl(Buffer.from(tls.ca)),
    // No Application Default Credentials lookup (which would probe the metadata server): auth is off here.
    authClient: { getRequestHeaders: async () => new Headers() } as never,
  };
}

beforeAll(async () => {
  process.env['METADATA_SERVER_DETECTION'] = 'none';
  tls = await testGatewayTls();
  env = await setUpNamespace(await createTestNamespace('gateway-grpc'));
  const ns = env.namespace;
  ({ endpointName, servers } = await deployFraudSplit(ns, { labels: { team: 'risk' }, description: 'card payments' }));
  // A model server that streams server-sent events: the first at once, the last only when the test allows it.
  streamer = http.createServer((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"token":"first"}\n\n');
      finishStream = () => res.end('data: {"token":"last"}\n\n');
    });
  });
  await listenInHost(streamer);
  await apply(
    ns,
    serviceManifest({ name: 'streamer', protocol: 'KServeV1', ports: [(streamer.address() as AddressInfo).port] }),
  );
  await apply(
    ns,
    endpointManifest('chat', { '5': 100 }, [
      { name: 'chat-model', id: '5', backend: { service: 'streamer', protocol: 'KServeV1' } },
    ]),
  );
  streamingName = await waitDeployed(ns, 'chat', ['5']);
  const started = await startGateway(env, log.logger, { tls: { cert: tls.cert, key: tls.key } });
  gateway = started.gateway;
  port = Number(new URL(started.url).port);
}, 240_000);

afterAll(async () => {
  await gateway?.close();
  for (const server of servers) await server.close();
  await new Promise((r) => streamer?.close(r));
  await env?.operator.stop();
});

describe('the official Node clients over gRPC (no fallback)', () => {
  it('PredictionServiceClient.predict answers with the predictions and the deployed model, split 70/30', async () => {
    const client = new aiplatform.PredictionServiceClient(clientOptions());
    try {
      const counts: Record<string, number> = {};
      for (let i = 0; i < 100; i++) {
        const [answer] = await client.predict({
          endpoint: endpointName,
          instances: [
            {
              structValue: {
                fields: Object.fromEntries(Object.entries(instance).map(([k, v]) => [k, { numberValue: v }])),
              },
            },
          ],
        });
        expect(answer.predictions).toHaveLength(1);
        counts[answer.deployedModelId ?? ''] = (counts[answer.deployedModelId ?? ''] ?? 0) + 1;
      }
      expect(counts).toEqual({ '1': 70, '2': 30 });
    } finally {
      await client.close();
    }
  });

  it('EndpointServiceClient.getEndpoint and listEndpoints read the Endpoint as Vertex returns it', async () => {
    const client = new aiplatform.EndpointServiceClient(clientOptions());
    try {
      const [endpoint] = await client.getEndpoint({ name: endpointName });
      expect(endpoint.name).toBe(endpointName);
      expect(endpoint.displayName).toBe('gateway test fraud');
      expect(endpoint.description).toBe('card payments');
      expect(endpoint.labels).toEqual({ team: 'risk' });
      expect(endpoint.trafficSplit).toEqual({ '1': 70, '2': 30 });
      expect(endpoint.deployedModels?.map((m) => m.id).sort()).toEqual(['1', '2']);
      const parent = endpointName.slice(0, endpointName.indexOf('/endpoints/'));
      const [list] = await client.listEndpoints({ parent, filter: 'labels.team="risk"' });
      expect(list.map((e) => e.name)).toEqual([endpointName]);
      const [none] = await client.listEndpoints({ parent, filter: 'display_name="nothing"' });
      expect(none).toEqual([]);
      await expect(client.getEndpoint({ name: `${parent}/endpoints/missing` })).rejects.toMatchObject({ code: 5 });
      // A write on a gateway run with --auth=none: no field manager could name the writer, so nothing is written.
      await expect(client.deleteEndpoint({ name: endpointName })).rejects.toMatchObject({
        code: 9,
        details: expect.stringContaining('writes need an authenticated caller'),
      });
    } finally {
      await client.close();
    }
  });

  it('answers errors with the REST codes: an unknown endpoint NOT_FOUND, a bad name INVALID_ARGUMENT', async () => {
    const client = new aiplatform.PredictionServiceClient(clientOptions());
    try {
      const missing = endpointName.replace(/endpoints\/.*$/, 'endpoints/missing');
      await expect(client.predict({ endpoint: missing, instances: [] })).rejects.toMatchObject({ code: 5 });
      await expect(client.predict({ endpoint: 'not-a-name', instances: [] })).rejects.toMatchObject({ code: 3 });
    } finally {
      await client.close();
    }
  });

  it('LookupServiceClient.resolveService answers NOT_FOUND for a service nobody registered', async () => {
    const client = new servicedirectory.LookupServiceClient(clientOptions());
    try {
      await expect(
        client.resolveService({ name: 'projects/p/locations/l/namespaces/n/services/none' }),
      ).rejects.toMatchObject({ code: 5 });
    } finally {
      await client.close();
    }
  });
});

describe('REST on the same TLS port', () => {
  it('answers :predict over HTTP/2 and the Endpoint over HTTP/1.1', async () => {
    const session = connect(`https://127.0.0.1:${port}`, { ca: tls.ca, servername: 'localhost' });
    try {
      const stream = session.request({
        ':method': 'POST',
        ':path': `/v1/${endpointName}:predict`,
        'content-type': 'application/json',
      });
      stream.end(JSON.stringify({ instances: [instance] }));
      const chunks: Buffer[] = [];
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(status).toBe(200);
      expect(JSON.parse(Buffer.concat(chunks).toString()).predictions).toHaveLength(1);
    } finally {
      session.close();
    }
    const res = await fetch(`https://127.0.0.1:${port}/v1/${endpointName}`).catch((err: unknown) => err);
    // Node's fetch trusts only the system's CAs: the refusal is the TLS verification, not the gateway.
    expect(String((res as Error).cause ?? res)).toMatch(/certificate|self.signed|unable to verify/i);
  });
});

describe('streaming (StreamRawPredict, :streamRawPredict)', () => {
  it('passes the first event on over REST before the model server has finished', async () => {
    const res = await request(`https://localhost:${port}/v1/${streamingName}:streamRawPredict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"prompt":"hi"}',
      dispatcher: new (await import('undici')).Agent({ connect: { ca: tls.ca } }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const chunks: string[] = [];
    for await (const chunk of res.body) {
      chunks.push(String(chunk));
      // The server holds its last event until the first has been seen here.
      if (chunks.length === 1) finishStream();
    }
    expect(chunks[0]).toBe('data: {"token":"first"}\n\n');
    expect(chunks.join('')).toBe('data: {"token":"first"}\n\ndata: {"token":"last"}\n\n');
  });

  it('streams over gRPC: one HttpBody per chunk, the first before the server has finished', async () => {
    const client = new aiplatform.PredictionServiceClient(clientOptions());
    try {
      const stream = client.streamRawPredict({
        endpoint: streamingName,
        httpBody: { contentType: 'application/json', data: Buffer.from('{"prompt":"hi"}') },
      });
      const seen: string[] = [];
      for await (const body of stream as AsyncIterable<{ contentType: string; data: Uint8Array }>) {
        seen.push(Buffer.from(body.data).toString());
        expect(body.contentType).toBe('text/event-stream');
        if (seen.length === 1) finishStream();
      }
      expect(seen[0]).toBe('data: {"token":"first"}\n\n');
      expect(seen.join('')).toBe('data: {"token":"first"}\n\ndata: {"token":"last"}\n\n');
    } finally {
      await client.close();
    }
  });
});

describe('bad input over gRPC', () => {
  it('answers a malformed message INVALID_ARGUMENT, an oversize one RESOURCE_EXHAUSTED, an unknown method UNIMPLEMENTED', async () => {
    const session = connect(`https://localhost:${port}`, { ca: tls.ca });
    const call = (path: string, frame: Buffer) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = session.request({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          te: 'trailers',
        });
        let headers: Record<string, unknown> = {};
        stream.on('response', (h) => (headers = h));
        stream.on('trailers', (t) => (headers = { ...headers, ...t }));
        stream.on('error', reject);
        stream.resume().on('end', () => resolve(headers));
        stream.end(frame);
      });
    // gRPC's length-prefixed message: a compression flag byte (0), the length (big-endian), the bytes.
    const framed = (payload: Buffer): Buffer => {
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(payload.length, 1);
      return Buffer.concat([prefix, payload]);
    };
    try {
      const malformed = await call(
        '/google.cloud.aiplatform.v1.PredictionService/Predict',
        framed(Buffer.from([0x0a, 0xff, 0xff, 0xff])),
      );
      expect(malformed['grpc-status']).toBe('3');
      const oversize = await call(
        '/google.cloud.aiplatform.v1.PredictionService/Predict',
        framed(Buffer.alloc(200_000, 0x20)),
      );
      expect(oversize['grpc-status']).toBe('8');
      const unknown = await call('/google.cloud.aiplatform.v1.PredictionService/NoSuchMethod', framed(Buffer.alloc(0)));
      expect(unknown['grpc-status']).toBe('12');
      const service = await call('/no.such.Service/Call', framed(Buffer.alloc(0)));
      expect(service['grpc-status']).toBe('12');
    } finally {
      session.close();
    }
  });
});

describe('deadlines and trust', () => {
  it("bounds the model server call by the client's deadline: DEADLINE_EXCEEDED, and the model server's request ends", async () => {
    const client = new aiplatform.PredictionServiceClient(clientOptions());
    try {
      const started = Date.now();
      // The streaming server holds its answer until finishStream(): a model server that takes too long.
      const call = client.rawPredict(
        { endpoint: streamingName, httpBody: { contentType: 'application/json', data: Buffer.from('{}') } },
        { timeout: 500 },
      );
      await expect(call).rejects.toMatchObject({ code: 4 });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      finishStream();
      await client.close();
    }
  });

  it('fails the handshake of a client that does not trust the CA, and logs it once, not per retry', async () => {
    for (let i = 0; i < 3; i++) {
      const error = await new Promise<Error>((resolve) => {
        const session = connect(`https://localhost:${port}`);
        session.on('error', resolve);
      });
      expect(error.message).toMatch(/certificate/i);
    }
    // Every untrusting handshake of this file (the fetch above too) falls within one minute: one line for them all.
    expect(log.records.filter((r) => r.msg === 'a client failed its TLS handshake with the gateway')).toHaveLength(1);
  });
});
