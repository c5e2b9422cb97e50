/**
 * Gateway authentication and authorization on a real kube-apiserver, driven as callers do: tokens minted
 * by TokenRequest for ServiceAccounts, RBAC granted with RoleBindings to the shipped ClusterRoles,
 * HTTP calls with `Authorization: Bearer`. Short cache windows (set as the flags would) make removed
 * accounts and bindings take effect within the test.
 */
import { v1 as aiplatform } from '@google-cloud/aiplatform';
import { v1 as servicedirectory } from '@google-cloud/service-directory';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerTokenAuth, gatewayClientOptions } from '../../../examples/gateway-client/bearer-token-auth.js';
import { authCacheEntries, authReviews } from '../../../src/gateway/auth/metrics.js';
import { createMetricsGuard } from '../../../src/gateway/auth/gateway-auth.js';
import { DEFAULT_AUTH_SETTINGS, type AuthSettings } from '../../../src/gateway/auth/settings.js';
import { HealthChecks, startHealthServer } from '../../../src/runtime/health-server.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { metricValue } from '../../support/metric-value.js';
import { createTestNamespace } from '../../support/cluster.js';
import {
  apply,
  CapturedLog,
  client,
  endpointManifest,
  eventually,
  listenInHost,
  post,
  serviceManifest,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';
import {
  applyCallerRoles,
  bindClusterRole,
  bindRole,
  createServiceAccount,
  deleteServiceAccount,
  mintToken,
  unbind,
} from '../../support/service-accounts.js';

const AUDIENCE = 'endpoint-operator-gateway';
const APISERVER_TOKEN_CACHE_MS = 10_000;
const AUTH: AuthSettings = {
  ...DEFAULT_AUTH_SETTINGS,
  tokenSuccessTtlMs: 2_000,
  tokenFailureTtlMs: 1_000,
  accessAllowTtlMs: 2_000,
  accessDenyTtlMs: 1_000,
  cacheEntries: 500,
  maxReviewsInFlight: 8,
  reviewsPerSecond: 50,
};

let env: GatewayEnv;
let gateway: GatewayServer;
let base = '';
let health = '';
let modelServer: http.Server;
const seenByModel: http.IncomingHttpHeaders[] = [];
const log = new CapturedLog();
let endpointName = '';
const tokens: Record<string, string> = {};
const SERVICE = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout';

/** A KServe V1 model server that records the headers it receives (what must never hold the caller's credentials). */
async function recordingModelServer(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    seenByModel.push(req.headers);
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => (body += c))
      .on('end', () => {
        const n = (JSON.parse(body) as { instances?: unknown[] }).instances?.length ?? 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            predictions: Array.from({ length: n }, () => 0.5),
            explanations: Array.from({ length: n }, () => ({ score: 1 })),
          }),
        );
      });
  });
  await listenInHost(server);
  return server;
}

const bearer = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { authorization: `Bearer ${token}` };
const predictUrl = (name: string, method = 'predict'): string => `${base}/v1/${name}:${method}`;

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const res = await request(url, { dispatcher: client, headers });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

beforeAll(async () => {
  env = await setUpNamespace(await createTestNamespace('gateway-auth'));
  const ns = env.namespace;
  modelServer = await recordingModelServer();
  await apply(
    ns,
    serviceManifest({ name: 'recorder', protocol: 'KServeV1', ports: [(modelServer.address() as AddressInfo).port] }),
  );
  await apply(
    ns,
    endpointManifest('fraud', { '1': 100 }, [
      { name: 'fraud-model', id: '1', backend: { service: 'recorder', protocol: 'KServeV1' } },
    ]),
  );
  await apply(
    ns,
    [
      `apiVersion: registry.endpoint-operator.dev/v1\nkind: RegistryService\nmetadata: {name: checkout}\nspec: {name: ${SERVICE}}`,
      `apiVersion: registry.endpoint-operator.dev/v1\nkind: RegistryEndpoint\nmetadata: {name: checkout-1}\nspec: {name: ${SERVICE}/endpoints/checkout-1, address: 10.0.0.1, port: 8443}`,
    ].join('\n---\n'),
  );
  endpointName = await waitDeployed(ns, 'fraud', ['1']);
  await applyCallerRoles();
  for (const sa of ['bound', 'unbound', 'doomed', 'scraper']) await createServiceAccount(ns, sa);
  for (const sa of ['bound', 'doomed']) {
    await bindRole(ns, `${sa}-predict`, 'endpoint-operator-prediction-caller', sa);
    await bindRole(ns, `${sa}-registry`, 'endpoint-operator-registry-reader', sa);
  }
  await bindClusterRole(`${ns}-scraper`, 'endpoint-operator-metrics-reader', ns, 'scraper');
  tokens.bound = await mintToken(ns, 'bound', [AUDIENCE]);
  tokens.unbound = await mintToken(ns, 'unbound', [AUDIENCE]);
  tokens.doomed = await mintToken(ns, 'doomed', [AUDIENCE]);
  tokens.otherAudience = await mintToken(ns, 'bound', ['some-other-service']);
  tokens.apiserverAudience = await mintToken(ns, 'bound', []);
  tokens.scraper = await mintToken(ns, 'scraper', []);
  let healthPort: number | undefined;
  ({
    gateway,
    url: base,
    healthPort,
  } = await startGateway(env, log.logger, { auth: AUTH, health: { host: '127.0.0.1', port: 0 } }));
  health = `http://127.0.0.1:${healthPort ?? 0}`;
}, 180_000);

afterAll(async () => {
  await gateway?.close();
  await new Promise((r) => modelServer?.close(r));
  await env?.operator.stop();
});

describe('authentication', () => {
  it('answers 401 UNAUTHENTICATED with a Bearer challenge to no token, a garbage token and a token for another audience', async () => {
    for (const headers of [
      {},
      bearer('not-a-token'),
      bearer(tokens.otherAudience),
      bearer(tokens.apiserverAudience),
      { authorization: 'Basic Ym9iOnB3' },
    ]) {
      const r = await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, headers);
      expect(r.status, r.text).toBe(401);
      expect(r.json.error.status).toBe('UNAUTHENTICATED');
      expect(r.headers['www-authenticate']).toMatch(/^Bearer realm="endpoint-operator-gateway"/);
    }
    const missing = await post(predictUrl(endpointName), { instances: [{ a: 1 }] });
    expect(missing.json.error.message).toContain(
      'kubectl create token SERVICE_ACCOUNT --audience endpoint-operator-gateway',
    );
  });

  it('serves a bound caller, and the model server never sees Authorization or Cookie', async () => {
    seenByModel.length = 0;
    const headers = { ...bearer(tokens.bound), cookie: 'session=secret' };
    const predicted = await post(predictUrl(endpointName), { instances: [{ a: 1 }, { a: 2 }] }, headers);
    expect(predicted.status, predicted.text).toBe(200);
    expect(predicted.json.predictions).toEqual([0.5, 0.5]);
    expect((await post(predictUrl(endpointName, 'explain'), { instances: [{ a: 1 }] }, headers)).status).toBe(200);
    expect((await post(predictUrl(endpointName, 'rawPredict'), { instances: [{ a: 1 }] }, headers)).status).toBe(200);
    expect(seenByModel.length).toBe(3);
    for (const h of seenByModel) {
      expect(h.authorization).toBeUndefined();
      expect(h.cookie).toBeUndefined();
    }
  });

  it('refuses a token of a deleted ServiceAccount within the token cache window', async () => {
    expect((await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.doomed))).status).toBe(200);
    await deleteServiceAccount(env.namespace, 'doomed');
    const deleted = Date.now();
    const r = await eventually(
      'the deleted account is refused',
      async () => {
        const answer = await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.doomed));
        return answer.status === 401 ? answer : undefined;
      },
      40_000,
    );
    expect(r.json.error.status).toBe('UNAUTHENTICATED');
    // The kube-apiserver caches its own successful token authentications for 10 s (kube-apiserver's
    // TokenSuccessCacheTTL), so a TokenReview can still say yes that long after the deletion.
    expect(Date.now() - deleted).toBeLessThan(AUTH.tokenSuccessTtlMs + APISERVER_TOKEN_CACHE_MS + 5_000);
  });
});

describe('authorization', () => {
  it('answers 403 PERMISSION_DENIED naming the permission, the same for an endpoint that exists and one that does not', async () => {
    const existing = await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.unbound));
    expect(existing.status, existing.text).toBe(403);
    expect(existing.json.error.status).toBe('PERMISSION_DENIED');
    for (const part of [
      '"predict"',
      'predictionendpoints/fraud',
      `namespace "${env.namespace}"`,
      'endpoint-operator-prediction-caller',
    ])
      expect(existing.json.error.message).toContain(part);
    const missingName = endpointName.replace(/fraud$/, 'no-such-endpoint');
    const missing = await post(predictUrl(missingName), { instances: [{ a: 1 }] }, bearer(tokens.unbound));
    expect(missing.status).toBe(403);
    expect(missing.json.error.message).toBe(existing.json.error.message.split('fraud').join('no-such-endpoint'));
    // With permission in the namespace, the missing endpoint is a plain 404.
    expect((await post(predictUrl(missingName), { instances: [{ a: 1 }] }, bearer(tokens.bound))).status).toBe(404);
  });

  it('guards the registry lookup: resolve, get and list for a bound caller; one identical 403 otherwise', async () => {
    const resolved = await eventually('checkout resolves', async () => {
      const r = await post(`${base}/v1/${SERVICE}:resolve`, {}, bearer(tokens.bound));
      return r.status === 200 ? r : undefined;
    });
    expect(resolved.json.service.endpoints).toHaveLength(1);
    expect((await get(`${base}/v1/${SERVICE}`, bearer(tokens.bound))).status).toBe(200);
    expect((await get(`${base}/v1/${SERVICE}/endpoints`, bearer(tokens.bound))).status).toBe(200);
    const noToken = await post(`${base}/v1/${SERVICE}:resolve`, {});
    expect([noToken.status, noToken.headers['www-authenticate']]).toEqual([
      401,
      'Bearer realm="endpoint-operator-gateway"',
    ]);
    const denied = await post(`${base}/v1/${SERVICE}:resolve`, {}, bearer(tokens.unbound));
    const nowhere = await post(`${base}/v1/${SERVICE}-gone:resolve`, {}, bearer(tokens.unbound));
    expect([denied.status, nowhere.status]).toEqual([403, 403]);
    expect(nowhere.json.error.message).toBe(denied.json.error.message.split('checkout').join('checkout-gone'));
    expect(denied.json.error.message).not.toContain(env.namespace);
  });

  it('refuses a caller whose binding was removed within the allow window', async () => {
    expect((await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.bound))).status).toBe(200);
    await unbind(env.namespace, 'bound-predict');
    const removed = Date.now();
    await eventually(
      'the unbound caller is refused',
      async () => {
        const r = await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.bound));
        return r.status === 403 ? r : undefined;
      },
      20_000,
    );
    expect(Date.now() - removed).toBeLessThan(AUTH.accessAllowTtlMs + 5_000);
    await bindRole(env.namespace, 'bound-predict', 'endpoint-operator-prediction-caller', 'bound');
    // Granted again: allowed once the denial's window (1 s) has passed.
    await eventually(
      'the caller is allowed again',
      async () =>
        (await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.bound))).status === 200,
      20_000,
    );
  });
});

describe('/metrics and health', () => {
  it('keeps /healthz and /readyz open and asks a token allowed to get /metrics', async () => {
    expect((await get(`${health}/healthz`)).status).toBe(200);
    expect((await get(`${health}/readyz`)).status).toBe(200);
    const anonymous = await get(`${health}/metrics`);
    expect([anonymous.status, anonymous.headers['www-authenticate']]).toEqual([
      401,
      'Bearer realm="endpoint-operator-gateway"',
    ]);
    expect((await get(`${health}/metrics`, bearer(tokens.unbound))).status).toBe(401); // minted for the gateway, not the apiserver
    const forbidden = await get(`${health}/metrics`, bearer(tokens.apiserverAudience));
    expect(forbidden.status).toBe(403);
    expect(forbidden.text).toContain('endpoint-operator-metrics-reader');
    const scraped = await get(`${health}/metrics`, bearer(tokens.scraper));
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('endpoint_operator_gateway_auth_decisions_total{call="predict",outcome="allowed"}');
    expect(scraped.text).toContain('endpoint_operator_gateway_auth_enabled 1');
  });
});

describe("the operator's /metrics (run --metrics-auth=token-review)", () => {
  it('serves /metrics to a token allowed to get it, refuses others, and leaves /healthz open', async () => {
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checks: new HealthChecks(),
      guardMetrics: createMetricsGuard(env.operator.client, DEFAULT_AUTH_SETTINGS),
    });
    try {
      const at = `http://127.0.0.1:${server.port}`;
      expect((await get(`${at}/healthz`)).status).toBe(200);
      expect((await get(`${at}/metrics`)).status).toBe(401);
      expect((await get(`${at}/metrics`, bearer(tokens.apiserverAudience))).status).toBe(403);
      expect((await get(`${at}/metrics`, bearer(tokens.scraper))).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("Google's official Node clients (REST transport) with a real token", () => {
  // The example's auth client (examples/gateway-client), given the token instead of the projected file. The clients'
  // types ask for google-auth-library's AuthClient class; their REST transport calls only getRequestHeaders/fetch.
  const options = (token: string): never => gatewayClientOptions(base, bearerTokenAuth(token)) as never;
  const codeOf = async (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => 0,
      (err: { code?: unknown }) => err.code,
    );

  it('Vertex AI PredictionServiceClient: allowed, then gRPC 16 UNAUTHENTICATED and 7 PERMISSION_DENIED', async () => {
    const instances = [{ structValue: { fields: { a: { numberValue: 1 } } } }];
    const allowed = new aiplatform.PredictionServiceClient(options(tokens.bound ?? ''));
    const [answer] = await allowed.predict({ endpoint: endpointName, instances });
    expect(answer.deployedModelId).toBe('1');
    expect(answer.predictions?.[0]?.numberValue).toBe(0.5);
    expect(
      await codeOf(
        new aiplatform.PredictionServiceClient(options('garbage')).predict({ endpoint: endpointName, instances }),
      ),
    ).toBe(16);
    expect(
      await codeOf(
        new aiplatform.PredictionServiceClient(options(tokens.unbound ?? '')).predict({
          endpoint: endpointName,
          instances,
        }),
      ),
    ).toBe(7);
    await allowed.close();
  });

  it('Service Directory LookupServiceClient: allowed, then gRPC 16 and 7', async () => {
    const [resolved] = await new servicedirectory.LookupServiceClient(options(tokens.bound ?? '')).resolveService({
      name: SERVICE,
    });
    expect(resolved.service?.endpoints?.map((e) => e.address)).toEqual(['10.0.0.1']);
    expect(
      await codeOf(new servicedirectory.LookupServiceClient(options('garbage')).resolveService({ name: SERVICE })),
    ).toBe(16);
    expect(
      await codeOf(
        new servicedirectory.LookupServiceClient(options(tokens.unbound ?? '')).resolveService({ name: SERVICE }),
      ),
    ).toBe(7);
  });
});

describe('a storm of invalid tokens', () => {
  it('sends the kube-apiserver no more TokenReviews than the bound, answers only 401 or 429, keeps caches capped and a cached caller served', async () => {
    expect((await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.bound))).status).toBe(200);
    const reviewsBefore = await metricValue(authReviews, { review: 'token' });
    const started = Date.now();
    const statuses = new Map<number, number>();
    const cachedCaller: number[] = [];
    let next = 0;
    const TOTAL = 10_000;
    const worker = async (): Promise<void> => {
      while (next < TOTAL) {
        const i = next++;
        const r = await post(
          predictUrl(endpointName),
          { instances: [{ a: 1 }] },
          bearer(`garbage-${i}-${Math.random().toString(36).slice(2)}`),
        );
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (i % 500 === 0)
          cachedCaller.push(
            (await post(predictUrl(endpointName), { instances: [{ a: 1 }] }, bearer(tokens.bound))).status,
          );
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    const seconds = (Date.now() - started) / 1000;
    const reviews = (await metricValue(authReviews, { review: 'token' })) - reviewsBefore;
    expect(
      [...statuses.keys()].every((s) => s === 401 || s === 429),
      JSON.stringify([...statuses]),
    ).toBe(true);
    // The bucket holds one second's worth and refills at reviewsPerSecond; the cached caller's renewals (one per
    // token window) pass outside the budget.
    const renewals = Math.ceil(seconds / (AUTH.tokenSuccessTtlMs / 1000)) + 1;
    expect(reviews).toBeLessThanOrEqual(AUTH.reviewsPerSecond * (seconds + 1) + renewals);
    expect(statuses.get(429) ?? 0).toBeGreaterThan(0);
    expect(
      cachedCaller.every((s) => s === 200),
      JSON.stringify(cachedCaller),
    ).toBe(true);
    expect(await metricValue(authCacheEntries, { cache: 'token' })).toBeLessThanOrEqual(2 * AUTH.cacheEntries);
  }, 300_000);
});
