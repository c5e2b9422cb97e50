/**
 * The dashboard and the alerts against a real Prometheus (Debian's binary) scraping, on loopback,
 * `endpoint-operator run` (controllers, webhooks, sign-in API) and `endpoint-operator gateway` as
 * separate processes of the test cluster, with a ServiceAccount token allowed to `get` /metrics.
 * After objects are applied through the webhooks and calls are sent through the gateway, every
 * dashboard panel query and every alert expression (its comparisons made `bool`, so a healthy
 * cluster still answers) must return at least one series: a metric renamed in the code breaks this
 * test, not a dashboard in production.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertExpressions } from '../../../src/deploy/alerts.js';
import { ADAPTER_RULES, GATEWAY_CALLS_SERIES } from '../../../src/deploy/autoscaling-metrics.js';
import { dashboardQueries } from '../../../src/deploy/dashboard.js';
import type { RunningDemoModelServer } from '../../../dev/models/demo/index.js';
import { distinctFreePorts } from '../../../dev/cluster/ports.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../src/webhook/settings.js';
import { createTestNamespace, kubectl, testCluster } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { testGatewayTls, writeGatewayTlsFiles, type TestGatewayTlsFiles } from '../../support/gateway-tls.js';
import { PrometheusServer } from '../../support/prometheus-server.js';
import {
  applyCallerRoles,
  bindClusterRole,
  bindRole,
  createServiceAccount,
  mintToken,
} from '../../support/service-accounts.js';
import {
  apply,
  endpointManifest,
  eventually,
  post,
  serviceManifest,
  startModelServer,
  waitDeployed,
} from '../gateway/harness.js';
import { installCrds, testClient } from '../reconcilers/harness.js';
import { uninstallWebhooks } from '../webhook/harness.js';

/** Waits until every target was scraped `count` more times (Prometheus scrapes each second). */
async function scrapesAfterNow(server: PrometheusServer, count: number): Promise<void> {
  const scraped = await server.query('max(timestamp(up))');
  const after = Number(scraped[0]?.value[1] ?? 0);
  await eventually(
    `${count} scrapes of every target`,
    async () => {
      const r = await server.query('min(timestamp(up))');
      return Number(r[0]?.value[1] ?? 0) >= after + count;
    },
    30_000,
  );
}

/** An alert expression that answers in a healthy cluster too: every comparison filter becomes a `bool` comparison. */
export function answeringAlways(expr: string): string {
  return expr.replace(/\s(==|!=|>=|<=|>|<)\s/g, ' $1 bool ');
}

const children: ChildProcess[] = [];
let namespace = '';
let prometheus: PrometheusServer | undefined;
let model: RunningDemoModelServer | undefined;
let gatewayUrl = '';
let gatewayClient: Agent;
let tlsFiles: TestGatewayTlsFiles | undefined;
/** The fraud endpoint's path and the caller's header, for calls after the first ones. */
let fraudPath = '';
let callerAuth: Record<string, string> = {};
const INSTANCE = { amount: 35, hourOfDay: 12, foreignMerchant: 0, cardPresent: 1, transactionsLast24h: 2 };
const clusterRoleBinding = (): string => `eo-test-metrics-reader-${namespace}`;

function startCli(name: string, args: string[]): ChildProcess {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(EO_|POD_|OTEL_|KUBECONFIG$)/.test(k)));
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test/support/run-cli.ts'), ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`${name} exited with ${code ?? signal}`);
  });
  children.push(child);
  return child;
}

async function waitHttp(url: string): Promise<void> {
  await eventually(
    `${url} answers 200`,
    async () => {
      try {
        return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status === 200;
      } catch {
        return false;
      }
    },
    90_000,
  );
}

/**
 * Prometheus' ServiceAccount bound to the shipped `endpoint-operator-metrics-reader` (its token has the API server's
 * audience, as a pod's has), and a caller bound in the namespace to `endpoint-operator-prediction-caller` (its token
 * minted for the gateway's audience): the gateway authenticates and authorises every call, so its auth metrics move.
 */
async function tokens(): Promise<{ metrics: string; caller: string }> {
  await applyCallerRoles();
  await createServiceAccount(namespace, 'prometheus');
  await bindClusterRole(clusterRoleBinding(), 'endpoint-operator-metrics-reader', namespace, 'prometheus');
  await createServiceAccount(namespace, 'caller');
  await bindRole(namespace, 'caller', 'endpoint-operator-prediction-caller', 'caller');
  return {
    metrics: await mintToken(namespace, 'prometheus', []),
    caller: await mintToken(namespace, 'caller', ['endpoint-operator-gateway']),
  };
}

beforeAll(async () => {
  namespace = await createTestNamespace('observability');
  // The webhooks leave the operator's own namespace out (kubernetes.io/metadata.name), so it is another one.
  const operatorNamespace = await createTestNamespace('observability-system');
  const client = testClient();
  await installCrds(client);
  client.close();
  const [health, metrics, webhook, signin, gatewayPort, gatewayHealth] = (await distinctFreePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const kubeconfig = testCluster().kubeconfig;
  const token = await tokens();
  const auth = { authorization: `Bearer ${token.caller}` };
  callerAuth = auth;
  startCli('operator', [
    'run',
    '--kubeconfig',
    kubeconfig,
    '--namespaces',
    namespace,
    '--operator-namespace',
    operatorNamespace,
    '--bind-address',
    '127.0.0.1',
    '--health-port',
    String(health),
    '--metrics-port',
    String(metrics),
    '--webhook-port',
    String(webhook),
    '--webhook-url-host',
    '127.0.0.1',
    '--lease-name',
    'observability-test',
    '--signin',
    '--signin-namespace',
    namespace,
    '--signin-host',
    '127.0.0.1',
    '--signin-port',
    String(signin),
  ]);
  // The gateway as the chart runs it: TLS from the certificate files of its Secret (its expiry is a metric and an alert).
  const tls = await testGatewayTls();
  tlsFiles = await writeGatewayTlsFiles(tls);
  gatewayClient = new Agent({ connect: { ca: tls.ca } });
  startCli('gateway', [
    'gateway',
    '--tls-cert-file',
    tlsFiles.certFile,
    '--tls-key-file',
    tlsFiles.keyFile,
    '--kubeconfig',
    kubeconfig,
    '--namespaces',
    namespace,
    '--bind-address',
    '127.0.0.1',
    '--port',
    String(gatewayPort),
    '--health-port',
    String(gatewayHealth),
  ]);
  gatewayUrl = `https://localhost:${gatewayPort}`;
  await waitHttp(`http://127.0.0.1:${health}/readyz`);
  await waitHttp(`http://127.0.0.1:${gatewayHealth}/readyz`);

  prometheus = await PrometheusServer.start(
    [
      { name: 'endpoint-operator', target: `127.0.0.1:${metrics}` },
      { name: 'endpoint-operator-gateway', target: `127.0.0.1:${gatewayHealth}` },
    ],
    token.metrics,
  );
  // A first scrape of both before anything happens, so that rates see the increases that follow.
  await eventually(
    'both targets scraped',
    async () => {
      const up = await prometheus?.query('up == 1');
      return up !== undefined && up.length === 2;
    },
    60_000,
  );

  // Through the webhooks (the operator registered them), reconciled, then called through the gateway.
  model = await startModelServer({ protocol: 'KServeV1', modelName: 'fraud-v1', version: 'v1' });
  await apply(namespace, serviceManifest({ name: 'fraud-v1', protocol: 'KServeV1', ports: [model.port] }));
  await apply(
    namespace,
    endpointManifest('fraud', { '1': 100 }, [
      { name: 'fraud-champion', id: '1', backend: { service: 'fraud-v1', protocol: 'KServeV1' } },
    ]),
  );
  await apply(
    namespace,
    endpointManifest('nowhere', { '8': 100 }, [
      { name: 'nowhere-model', id: '8', backend: { service: 'missing-service', protocol: 'KServeV1' } },
    ]),
  );
  const fraud = await waitDeployed(namespace, 'fraud', ['1']);
  const nowhere = await waitDeployed(namespace, 'nowhere', ['8']);
  fraudPath = fraud;
  const instance = INSTANCE;
  await eventually(
    'the gateway serves the endpoint',
    async () =>
      (await post(`${gatewayUrl}/v1/${fraud}:predict`, { instances: [instance] }, auth, gatewayClient)).status === 200,
    60_000,
  );
  for (let i = 0; i < 20; i++)
    expect(
      (await post(`${gatewayUrl}/v1/${fraud}:predict`, { instances: [instance] }, auth, gatewayClient)).status,
    ).toBe(200);
  for (let i = 0; i < 3; i++)
    expect(
      (await post(`${gatewayUrl}/v1/${nowhere}:predict`, { instances: [instance] }, auth, gatewayClient)).status,
    ).toBe(503);
  // A wrong password: the sign-in API's attempts counter moves.
  const login = await fetch(`http://127.0.0.1:${signin}/auth/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' }),
  });
  expect(login.status).toBe(401);
  await scrapesAfterNow(prometheus, 2);
}, 600_000);

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null) continue;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }
  await prometheus?.stop();
  await model?.close();
  await tlsFiles?.remove();
  // The operator registered its webhooks by URL on this process's ports: take them out of the shared cluster.
  const client = testClient();
  await uninstallWebhooks(client, DEFAULT_WEBHOOK_SETTINGS.configurationName);
  client.close();
  if (namespace !== '') await kubectl(['delete', 'clusterrolebinding', clusterRoleBinding(), '--ignore-not-found']);
}, 120_000);

describe('a real Prometheus scraping the operator and the gateway', () => {
  it('scrapes both with the metrics-reader token', async () => {
    const targets = await prometheus?.targets();
    expect(targets?.map((t) => `${t.job} ${t.health} ${t.lastError}`).sort()).toEqual([
      'endpoint-operator up ',
      'endpoint-operator-gateway up ',
    ]);
  });

  it('answers every dashboard panel query with at least one series', async () => {
    const empty: string[] = [];
    for (const { panel, expr } of dashboardQueries()) {
      if ((await prometheus?.query(expr))?.length === 0) empty.push(`${panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });

  it('answers every alert expression with at least one series', async () => {
    const empty: string[] = [];
    for (const { alert, expr } of alertExpressions()) {
      if ((await prometheus?.query(answeringAlways(expr)))?.length === 0)
        empty.push(`${alert}: ${answeringAlways(expr)}`);
    }
    expect(empty).toEqual([]);
  });

  it('answers the request-count autoscaling rule for one DeployedModel, in calls per minute', async () => {
    const rule = ADAPTER_RULES.find((r) => r.seriesQuery.startsWith(GATEWAY_CALLS_SERIES));
    expect(rule).toBeDefined();
    if (rule === undefined || prometheus === undefined) return;
    // A counter's first scraped value is where its rate starts: 30 more calls, spread over scrapes, as steady traffic is.
    for (let i = 0; i < 30; i++) {
      expect(
        (await post(`${gatewayUrl}/v1/${fraudPath}:predict`, { instances: [INSTANCE] }, callerAuth, gatewayClient))
          .status,
      ).toBe(200);
      if (i % 10 === 9) await scrapesAfterNow(prometheus, 1);
    }
    // The series the adapter discovers: each names a namespace and a DeployedModel, the resources its overrides map.
    const series = (await prometheus?.query(rule.seriesQuery)) ?? [];
    expect(series.map((s) => `${s.metric.namespace}/${s.metric.deployed_model_name}`)).toContain(
      `${namespace}/fraud-champion`,
    );
    // What the adapter asks Prometheus when the HPA of fraud-champion asks for the metric of that object.
    const query = rule.metricsQuery
      .replace('<<.Series>>', GATEWAY_CALLS_SERIES)
      .replace('<<.LabelMatchers>>', `namespace="${namespace}",deployed_model_name="fraud-champion"`)
      .replace('<<.GroupBy>>', 'deployed_model_name');
    const answer = (await prometheus?.query(query)) ?? [];
    expect(answer.map((a) => a.metric)).toEqual([{ deployed_model_name: 'fraud-champion' }]);
    // 30 calls within the last two minutes, counted from the first scrape after the series appeared.
    expect(Number(answer[0]?.value[1])).toBeGreaterThan(5);
  });

  it('finds no alert condition but on the endpoint whose model server does not exist', async () => {
    const conditions: string[] = [];
    for (const { alert, expr } of alertExpressions()) {
      for (const series of (await prometheus?.query(expr)) ?? [])
        conditions.push(`${alert} ${JSON.stringify(series.metric)}`);
    }
    // "nowhere" answers only 503s and its DeployedModel is not Ready (an instant query ignores `for`).
    expect(conditions.filter((c) => !c.includes('nowhere'))).toEqual([]);
  });
});
