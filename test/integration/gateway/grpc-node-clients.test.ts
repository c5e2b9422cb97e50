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
import { connect } from 'node:http2';
import type { RunningDemoModelServer } from '../../../src/demo-models/index.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace } from '../../support/cluster.js';
import { testGatewayTls, type TestGatewayTls } from '../../support/gateway-tls.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  serviceManifest,
  setUpNamespace,
  startGateway,
  startModelServer,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

let env: GatewayEnv;
let v1Server: RunningDemoModelServer;
let v2Server: RunningDemoModelServer;
let gateway: GatewayServer;
let port = 0;
let tls: TestGatewayTls;
let endpointName = '';
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
  v1Server = await startModelServer({ protocol: 'KServeV1', modelName: 'fraud-v1', version: 'v1' });
  v2Server = await startModelServer({ protocol: 'OpenInferenceV2', modelName: 'fraud-v2', version: 'v2' });
  const ns = env.namespace;
  await apply(ns, serviceManifest({ name: 'fraud-v1', protocol: 'KServeV1', ports: [v1Server.port] }));
  await apply(ns, serviceManifest({ name: 'fraud-v2', protocol: 'OpenInferenceV2', ports: [v2Server.port] }));
  await apply(
    ns,
    endpointManifest(
      'fraud',
      { '1': 70, '2': 30 },
      [
        { name: 'fraud-champion', id: '1', backend: { service: 'fraud-v1', protocol: 'KServeV1' } },
        { name: 'fraud-challenger', id: '2', backend: { service: 'fraud-v2', protocol: 'OpenInferenceV2' } },
      ],
      { labels: { team: 'risk' }, description: 'card payments' },
    ),
  );
  endpointName = await waitDeployed(ns, 'fraud', ['1', '2']);
  const started = await startGateway(env, log.logger, { tls: { cert: tls.cert, key: tls.key } });
  gateway = started.gateway;
  port = Number(new URL(started.url).port);
}, 240_000);

afterAll(async () => {
  await gateway?.close();
  await v1Server?.close();
  await v2Server?.close();
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
      await expect(client.deleteEndpoint({ name: endpointName })).rejects.toMatchObject({
        code: 12,
        details: expect.stringContaining('kubectl apply'),
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
