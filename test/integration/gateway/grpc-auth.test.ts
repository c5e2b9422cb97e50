/**
 * Authentication and authorisation over gRPC exactly as over REST, on one TLS gateway: no token, a token for
 * another audience, an unbound caller and a bound one, each called through Google's Node clients with their
 * defaults (gRPC) and through REST; the gRPC code is the REST answer's (16 ↔ 401, 7 ↔ 403), with the same message.
 * The Endpoint reads need `get`/`list` on predictionendpoints, which the shipped caller role grants.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerTokenAuth, gatewayGrpcClientOptions } from '../../../examples/gateway-client/bearer-token-auth.js';
import { v1 as aiplatform } from '@google-cloud/aiplatform';
import { Agent, request } from 'undici';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace } from '../../support/cluster.js';
import { runVertexGoClient } from '../../support/vertex-go-client.js';
import {
  testGatewayTls,
  writeGatewayTlsFiles,
  type TestGatewayTls,
  type TestGatewayTlsFiles,
} from '../../support/gateway-tls.js';
import { applyCallerRoles, bindRole, createServiceAccount, mintToken } from '../../support/service-accounts.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  listenInHost,
  serviceManifest,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

const AUDIENCE = 'endpoint-operator-gateway';
let env: GatewayEnv;
let gateway: GatewayServer;
let modelServer: http.Server;
let port = 0;
let tls: TestGatewayTls;
let tlsFiles: TestGatewayTlsFiles | undefined;
let endpointName = '';
let https: Agent;
const tokens: Record<string, string | undefined> = {};
const log = new CapturedLog();

function grpcOptions(token: string | undefined) {
  return gatewayGrpcClientOptions(
    `https://localhost:${port}`,
    tls.ca,
    token === undefined ? null : bearerTokenAuth(token),
  );
}

async function restCall(path: string, token: string | undefined, body?: unknown) {
  const res = await request(`https://localhost:${port}${path}`, {
    dispatcher: https,
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.statusCode, json: (await res.body.json()) as { error?: { message: string } } };
}

async function grpcCall(token: string | undefined): Promise<{ code: number; details: string }> {
  const client = new aiplatform.PredictionServiceClient(grpcOptions(token));
  try {
    await client.predict({ endpoint: endpointName, instances: [{ numberValue: 1 }] });
    return { code: 0, details: '' };
  } catch (err) {
    const e = err as { code: number; details: string };
    return { code: e.code, details: e.details };
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  process.env['METADATA_SERVER_DETECTION'] = 'none';
  tls = await testGatewayTls();
  tlsFiles = await writeGatewayTlsFiles(tls);
  https = new Agent({ connect: { ca: tls.ca } });
  env = await setUpNamespace(await createTestNamespace('gateway-grpc-auth'));
  const ns = env.namespace;
  modelServer = http.createServer((req, res) => {
    req
      .resume()
      .on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"predictions":[0.5]}'));
  });
  await listenInHost(modelServer);
  await apply(
    ns,
    serviceManifest({ name: 'plain', protocol: 'KServeV1', ports: [(modelServer.address() as AddressInfo).port] }),
  );
  await apply(
    ns,
    endpointManifest('fraud', { '1': 100 }, [
      { name: 'fraud-model', id: '1', backend: { service: 'plain', protocol: 'KServeV1' } },
    ]),
  );
  endpointName = await waitDeployed(ns, 'fraud', ['1']);
  await applyCallerRoles();
  for (const sa of ['bound', 'unbound']) await createServiceAccount(ns, sa);
  await bindRole(ns, 'bound-predict', 'endpoint-operator-prediction-caller', 'bound');
  tokens.bound = await mintToken(ns, 'bound', [AUDIENCE]);
  tokens.unbound = await mintToken(ns, 'unbound', [AUDIENCE]);
  tokens.otherAudience = await mintToken(ns, 'bound', ['some-other-service']);
  const started = await startGateway(env, log.logger, {
    auth: DEFAULT_AUTH_SETTINGS,
    tls: { cert: tls.cert, key: tls.key },
  });
  gateway = started.gateway;
  port = Number(new URL(started.url).port);
}, 180_000);

afterAll(async () => {
  await gateway?.close();
  await new Promise((r) => modelServer?.close(r));
  await https?.close();
  await env?.operator.stop();
  await tlsFiles?.remove();
});

describe('gRPC is authorised exactly as REST', () => {
  it.each([
    ['no token', undefined, 401, 16],
    ['a token for another audience', 'otherAudience', 401, 16],
    ['an unbound caller', 'unbound', 403, 7],
    ['a bound caller', 'bound', 200, 0],
  ] as const)('%s (%s): REST %i, gRPC code %i, the same message', async (_what, key, restStatus, grpcCode) => {
    const token = key === undefined ? undefined : tokens[key];
    const rest = await restCall(`/v1/${endpointName}:predict`, token, { instances: [1] });
    expect(rest.status).toBe(restStatus);
    const grpc = await grpcCall(token);
    expect(grpc.code, grpc.details).toBe(grpcCode);
    if (rest.json.error !== undefined) expect(grpc.details).toBe(rest.json.error.message);
  });

  it('reads the Endpoint with the caller role (get), and refuses an unbound caller the same over both', async () => {
    const client = new aiplatform.EndpointServiceClient(grpcOptions(tokens.bound));
    const denied = new aiplatform.EndpointServiceClient(grpcOptions(tokens.unbound));
    try {
      const [endpoint] = await client.getEndpoint({ name: endpointName });
      expect(endpoint.trafficSplit).toEqual({ '1': 100 });
      const parent = endpointName.slice(0, endpointName.indexOf('/endpoints/'));
      const [listed] = await client.listEndpoints({ parent });
      expect(listed.map((e) => e.name)).toEqual([endpointName]);
      await expect(denied.getEndpoint({ name: endpointName })).rejects.toMatchObject({ code: 7 });
      expect((await restCall(`/v1/${endpointName}`, tokens.unbound)).status).toBe(403);
      expect((await restCall(`/v1/${endpointName}`, tokens.bound)).status).toBe(200);
    } finally {
      await client.close();
      await denied.close();
    }
  });

  it("Go's cloud.google.com/go/aiplatform/apiv1 (gRPC, its default): Predict and GetEndpoint, refused alike when unbound", async () => {
    const calls = [
      { method: 'Predict' as const, endpoint: endpointName, instances: [1] },
      { method: 'GetEndpoint' as const, name: endpointName },
    ];
    const address = `localhost:${port}`;
    const [predicted, got] = await runVertexGoClient({
      address,
      caFile: tlsFiles?.caFile ?? '',
      token: tokens.bound ?? '',
      calls,
    });
    expect(predicted?.error, JSON.stringify(predicted)).toBeUndefined();
    expect(predicted?.response).toMatchObject({ predictions: [0.5], deployedModelId: '1' });
    expect(got?.response).toMatchObject({ name: endpointName, trafficSplit: { '1': 100 } });
    const refused = await runVertexGoClient({
      address,
      caFile: tlsFiles?.caFile ?? '',
      token: tokens.unbound ?? '',
      calls,
    });
    expect(refused.map((a) => a.error?.code)).toEqual([7, 7]);
  }, 1_800_000);
});
