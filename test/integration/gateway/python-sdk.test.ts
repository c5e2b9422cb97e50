/**
 * Google's Python SDKs (google-cloud-aiplatform 2.x and google-cloud-service-directory, from PyPI through the
 * hashed requirement set tools/python/aiplatform-sdk) against the gateway's TLS port, used as their documentation
 * shows: `aiplatform.init(api_endpoint=…, credentials=…)` then `aiplatform.Endpoint(name).predict()` and
 * `.explain()` over gRPC and REST, `PredictionServiceClient()` with its defaults, EndpointServiceClient's reads, the
 * 70/30 split over 1,000 gRPC calls, and `LookupServiceClient().resolve_service()`. The CA is trusted the way the
 * docs tell users (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, REQUESTS_CA_BUNDLE); google-auth never probes a metadata server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDemoModelServer } from '../../../dev/models/demo/index.js';
import { ensurePythonPackages, type PythonPackages } from '../../../dev/models/python-packages.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace } from '../../support/cluster.js';
import {
  testGatewayTls,
  writeGatewayTlsFiles,
  type TestGatewayTls,
  type TestGatewayTlsFiles,
} from '../../support/gateway-tls.js';
import { runVertexSdk } from '../../support/vertex-sdk.js';
import { apply, deployFraudSplit, CapturedLog, setUpNamespace, startGateway, type GatewayEnv } from './harness.js';

const SERVICE = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout';
let py: PythonPackages;
let env: GatewayEnv;
let servers: readonly RunningDemoModelServer[] = [];
let gateway: GatewayServer;
let tls: TestGatewayTls;
let tlsFiles: TestGatewayTlsFiles | undefined;
let port = 0;
let endpointName = '';
const log = new CapturedLog();
const instances = [{ amount: 1800, hourOfDay: 2, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 9 }];

// The SDK's answers, read field by field.
type SdkAnswer = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const sdk = (...args: string[]): Promise<SdkAnswer> =>
  runVertexSdk<SdkAnswer>(py, { port, caFile: tlsFiles?.caFile ?? '' }, args);

beforeAll(async () => {
  py = await ensurePythonPackages('aiplatform-sdk', (line) => console.error(`[python] ${line}`));
  tls = await testGatewayTls();
  tlsFiles = await writeGatewayTlsFiles(tls);
  env = await setUpNamespace(await createTestNamespace('gateway-python-sdk'));
  const ns = env.namespace;
  ({ endpointName, servers } = await deployFraudSplit(ns));
  await apply(
    ns,
    [
      `apiVersion: registry.endpoint-operator.dev/v1\nkind: RegistryService\nmetadata: {name: checkout}\nspec: {name: ${SERVICE}}`,
      `apiVersion: registry.endpoint-operator.dev/v1\nkind: RegistryEndpoint\nmetadata: {name: checkout-1}\nspec: {name: ${SERVICE}/endpoints/checkout-1, address: 10.20.0.11, port: 8443}`,
    ].join('\n---\n'),
  );
  const started = await startGateway(env, log.logger, { tls: { cert: tls.cert, key: tls.key } });
  gateway = started.gateway;
  port = Number(new URL(started.url).port);
}, 900_000);

afterAll(async () => {
  await gateway?.close();
  for (const server of servers) await server.close();
  await env?.operator.stop();
  await tlsFiles?.remove();
});

describe("Google's Python SDK with its defaults", () => {
  it.each(['grpc', 'rest'])(
    'aiplatform.init(api_endpoint=…) then Endpoint(name).predict() and .explain(), api_transport=%s',
    async (transport) => {
      const answer = await sdk('high-level', endpointName, transport, JSON.stringify(instances));
      expect(answer.error, JSON.stringify(answer)).toBeUndefined();
      expect(answer.displayName).toBe('gateway test fraud');
      expect(answer.trafficSplit).toEqual({ '1': 70, '2': 30 });
      expect(answer.predictions).toHaveLength(1);
      expect(['1', '2']).toContain(answer.deployedModelId);
      expect(answer.explanations).toBe(1);
    },
    300_000,
  );

  it('PredictionServiceClient() with its default transport (gRPC over TLS): the 70/30 split exact over 1,000 calls', async () => {
    const answer = await sdk('default-client', endpointName, JSON.stringify(instances), '1000');
    expect(answer.error, JSON.stringify(answer)).toBeUndefined();
    expect(answer.transport).toBe('grpc');
    expect(answer.counts).toEqual({ '1': 700, '2': 300 });
  }, 300_000);

  it('EndpointServiceClient().get_endpoint() and list_endpoints()', async () => {
    const answer = await sdk('endpoint-service', endpointName);
    expect(answer).toEqual({
      name: endpointName,
      displayName: 'gateway test fraud',
      deployedModels: ['1', '2'],
      trafficSplit: { '1': 70, '2': 30 },
      listed: [endpointName],
    });
  }, 300_000);

  it("google-cloud-service-directory's LookupServiceClient().resolve_service()", async () => {
    const answer = await sdk('resolve', SERVICE);
    expect(answer).toEqual({
      name: SERVICE,
      endpoints: [{ name: `${SERVICE}/endpoints/checkout-1`, address: '10.20.0.11', port: 8443 }],
    });
  }, 300_000);
});
