/**
 * The gateway's reviews when the kube-apiserver cannot answer (its own control plane, stopped and
 * started again): a caller whose decisions are cached is still served, a new caller gets 503
 * UNAVAILABLE (never 401: a down apiserver is not a bad token), and all is well after the restart.
 */
import { v1 as servicedirectory } from '@google-cloud/service-directory';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerTokenAuth, gatewayClientOptions } from '../../../examples/gateway-client/bearer-token-auth.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import { GatewayServer } from '../../../src/gateway/server.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import {
  applyCallerRoles,
  bindRole,
  createServiceAccount,
  mintToken,
  useCluster,
} from '../../support/service-accounts.js';
import {
  eventually,
  readyAndCurrent,
  registryEndpoint,
  registryService,
  resources,
  SERVICE_NAME,
  startFaultCluster,
  startOperatorUnderTest,
  type FaultCluster,
  type Observed,
  type OperatorUnderTest,
} from './own-control-plane.js';

const NS = 'fault-gateway-auth';
const AUDIENCE = 'endpoint-operator-gateway';

describe('gateway auth while the kube-apiserver is down', () => {
  let cluster: FaultCluster | undefined;
  let op: OperatorUnderTest | undefined;
  let gateway: GatewayServer | undefined;
  let gatewayClient: KubeClient | undefined;
  let base = '';
  const tokens: Record<string, string> = {};
  const logLines: string[] = [];

  beforeAll(async () => {
    cluster = await startFaultCluster(NS);
    op = await startOperatorUnderTest(cluster.plane, NS);
    useCluster(cluster.plane.kubeconfigPath);
    await applyCallerRoles();
    for (const sa of ['known', 'newcomer']) {
      await createServiceAccount(NS, sa);
      await bindRole(NS, `${sa}-registry`, 'endpoint-operator-registry-reader', sa);
      tokens[sa] = await mintToken(NS, sa, [AUDIENCE]);
    }
    await cluster.client.create(resources.registryServices, NS, registryService('checkout'));
    await cluster.client.create(resources.registryEndpoints, NS, registryEndpoint('checkout-a', '10.0.0.1', 8443));
    await eventually(
      'checkout Ready',
      async () => readyAndCurrent(await cluster?.client.get<Observed>(resources.registryServices, NS, 'checkout')),
      30_000,
    );
    // Short review deadline: the down apiserver answers connection refused at once anyway.
    gatewayClient = KubeClient.fromKubeconfig(cluster.plane.kubeconfigPath, { requestTimeoutMs: 5_000 });
    gateway = await GatewayServer.create({
      client: gatewayClient,
      namespaces: [NS],
      listen: { host: '127.0.0.1', port: 0 },
      log: pino(
        { level: 'info' },
        new Writable({
          write: (chunk: Buffer, _enc, done) => {
            logLines.push(chunk.toString('utf8'));
            done();
          },
        }),
      ),
      auth: { ...DEFAULT_AUTH_SETTINGS, reviewTimeoutMs: 3_000 },
    });
    base = `http://127.0.0.1:${(await gateway.start()).port}`;
  }, 300_000);

  afterAll(async () => {
    useCluster(undefined);
    try {
      await gateway?.close();
      gatewayClient?.close();
      await op?.stop();
    } finally {
      await cluster?.stop();
    }
  });

  const resolve = async (token: string): Promise<{ status: number; body: { error?: { status?: string } } }> => {
    const res = await request(`${base}/v1/${SERVICE_NAME}:resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{}',
    });
    return { status: res.statusCode, body: (await res.body.json()) as { error?: { status?: string } } };
  };

  it('serves cached callers, answers new ones 503 UNAVAILABLE, and recovers after the restart', async () => {
    if (cluster === undefined) throw new Error('no control plane');
    expect(
      await eventually(
        'the known caller resolves',
        async () => ((await resolve(tokens.known ?? '')).status === 200 ? true : undefined),
        30_000,
      ),
    ).toBe(true);
    await cluster.plane.stopApiserver();
    try {
      expect((await resolve(tokens.known ?? '')).status).toBe(200);
      const newcomer = await resolve(tokens.newcomer ?? '');
      expect(newcomer.status).toBe(503);
      expect(newcomer.body.error?.status).toBe('UNAVAILABLE');
      // An error is never cached: the same newcomer is asked about again (and refused again) rather than remembered.
      expect((await resolve(tokens.newcomer ?? '')).status).toBe(503);
      // Service Directory's own Node client raises gRPC 14 UNAVAILABLE (its retry-worthy code), not 16.
      const sd = new servicedirectory.LookupServiceClient(
        gatewayClientOptions(base, bearerTokenAuth(tokens.newcomer ?? '')) as never,
      );
      const code = await sd
        .resolveService({ name: SERVICE_NAME }, {
          // No retries: the client's default policy retries 14 until its deadline (then reports 4).
          retry: {
            retryCodes: [],
            backoffSettings: {
              initialRetryDelayMillis: 100,
              retryDelayMultiplier: 1,
              maxRetryDelayMillis: 100,
              initialRpcTimeoutMillis: 10_000,
              rpcTimeoutMultiplier: 1,
              maxRpcTimeoutMillis: 10_000,
              totalTimeoutMillis: 10_000,
            },
          },
        } as never)
        .then(
          () => 0,
          (err: { code?: unknown }) => err.code,
        );
      expect(code).toBe(14);
    } finally {
      await cluster.plane.startApiserver();
    }
    // One warning (rate-limited), naming neither the user nor the token.
    const warnings = logLines.filter((l) => l.includes('could not review a call'));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(2);
    for (const line of logLines) {
      expect(line).not.toContain('serviceaccount');
      for (const token of Object.values(tokens)) expect(line).not.toContain(token.slice(-20));
    }
    await eventually(
      'the newcomer is served after the restart',
      async () => ((await resolve(tokens.newcomer ?? '')).status === 200 ? true : undefined),
      60_000,
    );
  }, 180_000);
});
