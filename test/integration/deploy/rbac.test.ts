/**
 * The generated RBAC is enough, and nothing more is used: the operator runs under the
 * ServiceAccount's identity (a bearer token of a second control plane started here, since the
 * shared one cannot take new tokens) with leader election, webhooks and sign-in on, reconciles one
 * object of every kind to Ready, and never receives a 403.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import yaml from 'js-yaml';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MACHINE_TYPES_CONFIGMAP } from '../../../src/deploy/machine-types.js';
import { deployManifests } from '../../../src/deploy/manifests.js';
import { backendEndpointSlice, backendService, backendServiceRefs, hostedBackendFor } from '../../../dev/environment/backend-services.js';
import { DEFAULT_DEPLOY_VALUES, gatewaySelectorLabels, type DeployValues } from '../../../src/deploy/values.js';
import { startControlPlane, type ControlPlane } from '../../../dev/cluster/index.js';
import { startOperatorProcess, type RunningProcess } from '../../../src/operator/process.js';
import { DEFAULT_GATEWAY_TLS } from '../../../src/operator/gateway-certificate.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { restClientRequests } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { localWebhookSettings } from '../../../src/webhook/settings.js';
import { testCluster } from '../../support/cluster.js';
import { bindRole, createServiceAccount, mintToken, useCluster } from '../../support/service-accounts.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import { GatewayServer } from '../../../src/gateway/server.js';
import { REPO_ROOT } from '../../support/examples.js';

const OPERATOR_NS = 'endpoint-operator-system';
const DEMO_NS = 'endpoint-demo';
const SA_TOKEN = randomBytes(24).toString('hex');
const GATEWAY_SA_TOKEN = randomBytes(24).toString('hex');
const values: DeployValues = { ...DEFAULT_DEPLOY_VALUES, namespace: OPERATOR_NS, signin: { ...DEFAULT_DEPLOY_VALUES.signin, enabled: true, namespace: DEMO_NS } };

let plane: ControlPlane | undefined;
let running: RunningProcess | undefined;
let client: KubeClient | undefined;
const abort = new AbortController();
const logLines: string[] = [];

function kubectlAt(kubeconfig: string, args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(testCluster().kubectl, ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: err.message }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

async function admin(args: string[], input = ''): Promise<string> {
  if (!plane) throw new Error('no control plane');
  const r = await kubectlAt(plane.kubeconfigPath, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** The admin kubeconfig with the ServiceAccount's token in place of the admin's. */
function serviceAccountKubeconfig(adminPath: string, token = SA_TOKEN, file = 'operator-sa.kubeconfig'): string {
  const config = yaml.load(readFileSync(adminPath, 'utf8')) as { users: { user: { token?: string } }[] };
  for (const u of config.users) u.user = { token };
  const path = join(plane?.dataDir ?? '', file);
  writeFileSync(path, yaml.dump(config), { mode: 0o600 });
  return path;
}

function example(path: string): string {
  return readFileSync(join(REPO_ROOT, 'examples/valid', path), 'utf8');
}

beforeAll(async () => {
  plane = await startControlPlane({
    extraTokens: [
      {
        token: SA_TOKEN,
        user: `system:serviceaccount:${OPERATOR_NS}:endpoint-operator`,
        uid: 'endpoint-operator-sa-uid',
        groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_NS}`, 'system:authenticated'],
      },
      {
        token: GATEWAY_SA_TOKEN,
        user: `system:serviceaccount:${OPERATOR_NS}:endpoint-operator-gateway`,
        uid: 'endpoint-operator-gateway-sa-uid',
        groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_NS}`, 'system:authenticated'],
      },
    ],
  });
  // As an administrator installs: namespaces, CRDs, ServiceAccount and RBAC from the generator (the
  // workload objects need a kubelet; the operator registers its webhook configuration itself).
  const installed = new Set(['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
  const catalogue = (m: { kind: string; metadata: { name?: string } }): boolean => m.kind === 'ConfigMap' && m.metadata.name === MACHINE_TYPES_CONFIGMAP;
  const objects = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_NS } }, ...deployManifests(values).filter((m) => installed.has(m.kind) || catalogue(m))];
  await admin(['apply', '--validate=false', '-f', '-'], objects.map((o) => yaml.dump(o)).join('---\n'));
  await admin(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);

  client = KubeClient.fromKubeconfig(serviceAccountKubeconfig(plane.kubeconfigPath));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  const log = pino({ level: 'info' }, sink);
  running = await startOperatorProcess(
    client,
    {
      operator: {
        project: values.project,
        location: values.location,
        workers: 2,
        reservedPrefixes: values.reservedPrefixes,
        leaderElection: { enabled: true, namespace: OPERATOR_NS, leaseName: 'endpoint-operator-leader', identity: 'rbac-test' },
        // Followed live: a list and watch of that one ConfigMap, which the Role allows by resourceNames.
        machineCatalogueConfigMap: MACHINE_TYPES_CONFIGMAP,
        // What `run` makes of the chart's defaults: a containerSpec model's NetworkPolicy is server-side applied and watched.
        modelNetworkPolicy: { gatewayNamespace: OPERATOR_NS, gatewayPodLabels: gatewaySelectorLabels(), extraIngressFrom: [] },
        healthPort: -1,
        metricsPort: -1,
        bindAddress: '127.0.0.1',
      },
      webhook: { settings: localWebhookSettings(0, { namespace: OPERATOR_NS, reservedPrefixes: values.reservedPrefixes }), listen: { host: '127.0.0.1', port: 0 } },
      signin: { namespace: DEMO_NS, host: '127.0.0.1', port: 0 },
      // The gateway's certificate Secret, and its CA published in the clients' namespaces (a cluster-wide watch of one ConfigMap name).
      gatewayTls: { ...DEFAULT_GATEWAY_TLS, namespace: OPERATOR_NS },
    },
    log,
    abort.signal,
  );
}, 300_000);

afterAll(async () => {
  abort.abort();
  await running?.stop();
  client?.close();
  await plane?.stop();
}, 120_000);

describe('the operator under its ServiceAccount with the generated RBAC', () => {
  it('has the identity of the ServiceAccount, not an administrator', async () => {
    const kubeconfig = join(plane?.dataDir ?? '', 'operator-sa.kubeconfig');
    const can = async (...args: string[]): Promise<string> => (await kubectlAt(kubeconfig, ['auth', 'can-i', ...args])).stdout.trim();
    expect(await can('list', 'secrets', '-n', OPERATOR_NS)).toBe('yes');
    expect(await can('list', 'secrets', '-n', 'default')).toBe('no');
    // The machine catalogue: that one ConfigMap, listed and watched by name; no other ConfigMap.
    expect(await can('watch', `configmaps/${MACHINE_TYPES_CONFIGMAP}`, '-n', OPERATOR_NS)).toBe('yes');
    expect(await can('list', 'configmaps', '-n', OPERATOR_NS)).toBe('no');
    expect(await can('delete', 'predictionendpoints.prediction.endpoint-operator.dev', '-n', DEMO_NS)).toBe('no');
    expect(await can('create', 'signinsessions.pos.endpoint-operator.dev', '-n', DEMO_NS)).toBe('yes');
    expect(await can('create', 'signinsessions.pos.endpoint-operator.dev', '-n', 'default')).toBe('no');
    expect(await can('watch', 'endpointslices.discovery.k8s.io', '-n', DEMO_NS)).toBe('yes');
    expect(await can('watch', 'services', '-n', DEMO_NS)).toBe('yes');
    // Registry DNS projection: the operator writes selector-less Services and their EndpointSlices.
    expect(await can('create', 'services', '-n', DEMO_NS)).toBe('yes');
    expect(await can('update', 'endpointslices.discovery.k8s.io', '-n', DEMO_NS)).toBe('yes');
    expect(await can('create', 'pods', '-n', DEMO_NS)).toBe('no');
    // A containerSpec model's NetworkPolicy: applied, watched, deleted when turned off; never updated by replacement.
    expect(await can('patch', 'networkpolicies.networking.k8s.io', '-n', DEMO_NS)).toBe('yes');
    expect(await can('delete', 'networkpolicies.networking.k8s.io', '-n', DEMO_NS)).toBe('yes');
    expect(await can('update', 'networkpolicies.networking.k8s.io', '-n', DEMO_NS)).toBe('no');
    // /metrics behind TokenReview + SubjectAccessReview (run --metrics-auth).
    expect(await can('create', 'tokenreviews.authentication.k8s.io')).toBe('yes');
    expect(await can('create', 'subjectaccessreviews.authorization.k8s.io')).toBe('yes');
  });

  it('reconciles every kind to Ready, through the webhooks and conversion, without a single 403', async () => {
    // Through the webhook (admission) and, for the v1beta1 RegistryEndpoint, the conversion webhook.
    const manifests = [
      example('prediction/fraud-scoring-endpoint.yaml'),
      // containerSpec: the operator creates a Deployment, Service, HPA, PDB and NetworkPolicy and watches Pods.
      example('prediction/container-model.yaml'),
      // ...its gs:// artifact through the bucket map, which the operator lists and watches cluster-wide.
      example('prediction/artifact-buckets.yaml'),
      example('registry/service.yaml'),
      example('registry/endpoints.yaml'),
      example('registry/endpoint-v1beta1.yaml'),
      example('pos/shops.yaml'),
    ];
    // The DeployedModels' backend Services and their EndpointSlices: readiness reads them through a watch.
    const backends = backendServiceRefs(manifests.flatMap((m) => yaml.loadAll(m) as KubeObject[]))
      .map((ref) => hostedBackendFor(ref, testCluster().modelHost.address, 9))
      .flatMap((b) => [backendService(b), backendEndpointSlice(b)]);
    expect(backends.length).toBeGreaterThan(0);
    await admin(['apply', '--validate=false', '-f', '-'], [...manifests, ...backends.map((o) => yaml.dump(o))].join('\n---\n'));
    await admin(['wait', '-n', DEMO_NS, '--for=condition=Ready', '--timeout=90s', 'predictionendpoints,deployedmodels,registryservices,registryendpoints,shops', '--all']);

    // An object that is not Ready on its first status records an Event (a first Ready=True does not):
    // this exercises the Events rights.
    const orphan = {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: 'orphan-model', namespace: DEMO_NS },
      spec: { endpointRef: { name: 'no-such-endpoint' }, id: '9000000001', model: 'projects/p/locations/europe-west4/models/m@1', dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1 } },
    };
    await admin(['apply', '--validate=false', '-f', '-'], yaml.dump(orphan));
    await admin(['wait', '-n', DEMO_NS, '--for=condition=Ready=false', '--timeout=60s', 'deployedmodel/orphan-model']);
    const deadline = Date.now() + 30_000;
    let events = '';
    while (!events.includes('orphan-model') && Date.now() < deadline) {
      events = await admin(['get', 'events', '-n', DEMO_NS, '-o', 'jsonpath={range .items[*]}{.involvedObject.name}{"\\n"}{end}']);
      if (!events.includes('orphan-model')) await new Promise((r) => setTimeout(r, 200));
    }
    expect(events).toContain('orphan-model');

    const forbidden = await metricValue(restClientRequests, { code: '403' });
    const forbiddenLines = logLines.filter((l) => /forbidden|"status":403/i.test(l));
    expect(forbiddenLines, forbiddenLines.slice(0, 5).join('\n')).toEqual([]);
    expect(forbidden).toBe(0);
    // The requests did go through this client: the absence of 403s is not the absence of requests.
    expect(await metricValue(restClientRequests, { code: '200' })).toBeGreaterThan(10);
    // Leases, the webhook Secret and the sign-in signing key were written under these rights.
    expect(await admin(['get', 'lease', '-n', OPERATOR_NS, 'endpoint-operator-leader', '-o', 'jsonpath={.spec.holderIdentity}'])).toBe('rbac-test');
    expect(await admin(['get', 'secret', '-n', OPERATOR_NS, 'endpoint-operator-webhook-tls', '-o', 'name'])).toContain('endpoint-operator-webhook-tls');
    expect(await admin(['get', 'secret', '-n', OPERATOR_NS, 'endpoint-operator-gateway-tls', '-o', 'name'])).toContain('endpoint-operator-gateway-tls');
    expect(await admin(['get', 'configmap', '-n', DEMO_NS, 'endpoint-operator-gateway-ca.crt', '-o', 'name'])).toContain('endpoint-operator-gateway-ca.crt');
    expect(await admin(['get', 'networkpolicy', '-n', DEMO_NS, 'dm-churn-xgb-v3', '-o', 'jsonpath={.spec.ingress[0].ports[0].port}'])).toBe('8080');
    expect(await admin(['get', 'validatingwebhookconfiguration', 'endpoint-operator', '-o', 'name'])).toContain('endpoint-operator');
    expect(await admin(['get', 'mutatingwebhookconfiguration', 'endpoint-operator', '-o', 'name'])).toContain('endpoint-operator');
  });
});

describe('the gateway under its ServiceAccount with the generated RBAC, and the caller ClusterRoles', () => {
  let gateway: GatewayServer | undefined;
  let gatewayClient: KubeClient | undefined;
  afterAll(async () => {
    useCluster(undefined);
    await gateway?.close();
    gatewayClient?.close();
  });

  it('reviews tokens and access, and the ClusterRoles grant exactly the calls they name', async () => {
    if (plane === undefined) throw new Error('no control plane');
    const service = (yaml.loadAll(example('registry/service.yaml')) as KubeObject[]).find((o) => o.kind === 'RegistryService');
    const serviceName = (service?.spec as { name?: string } | undefined)?.name ?? '';
    expect(serviceName).not.toBe('');
    gatewayClient = KubeClient.fromKubeconfig(serviceAccountKubeconfig(plane.kubeconfigPath, GATEWAY_SA_TOKEN, 'gateway-sa.kubeconfig'));
    gateway = await GatewayServer.create({ client: gatewayClient, namespaces: [DEMO_NS], listen: { host: '127.0.0.1', port: 0 }, log: pino({ level: 'silent' }), auth: DEFAULT_AUTH_SETTINGS });
    const base = `http://127.0.0.1:${(await gateway.start()).port}`;
    useCluster(plane.kubeconfigPath);
    for (const sa of ['reader', 'predictor']) await createServiceAccount(DEMO_NS, sa);
    await bindRole(DEMO_NS, 'reader-registry', 'endpoint-operator-registry-reader', 'reader');
    await bindRole(DEMO_NS, 'predictor-predict', 'endpoint-operator-prediction-caller', 'predictor');
    const can = async (who: string, ...args: string[]): Promise<string> =>
      (await kubectlAt(plane?.kubeconfigPath ?? '', ['auth', 'can-i', ...args, '-n', DEMO_NS, '--as', `system:serviceaccount:${DEMO_NS}:${who}`])).stdout.trim();
    expect(await can('predictor', 'predict', 'predictionendpoints.prediction.endpoint-operator.dev/fraud-scoring')).toBe('yes');
    expect(await can('predictor', 'explain', 'predictionendpoints.prediction.endpoint-operator.dev/fraud-scoring')).toBe('yes');
    // get and list: the Endpoint reads Google's SDKs make before they predict (issue 42); nothing that writes.
    expect(await can('predictor', 'get', 'predictionendpoints.prediction.endpoint-operator.dev/fraud-scoring')).toBe('yes');
    expect(await can('predictor', 'list', 'predictionendpoints.prediction.endpoint-operator.dev')).toBe('yes');
    expect(await can('predictor', 'update', 'predictionendpoints.prediction.endpoint-operator.dev/fraud-scoring')).toBe('no');
    expect(await can('predictor', 'delete', 'predictionendpoints.prediction.endpoint-operator.dev/fraud-scoring')).toBe('no');
    expect(await can('predictor', 'resolve', 'registryservices.registry.endpoint-operator.dev/checkout')).toBe('no');
    expect(await can('reader', 'resolve', 'registryservices.registry.endpoint-operator.dev/checkout')).toBe('yes');
    expect(await can('reader', 'list', 'registryendpoints.registry.endpoint-operator.dev')).toBe('yes');
    expect(await can('reader', 'predict', 'predictionendpoints.prediction.endpoint-operator.dev/fraud-scoring')).toBe('no');
    const resolve = async (sa: string): Promise<number> => {
      const token = await mintToken(DEMO_NS, sa, ['endpoint-operator-gateway']);
      const res = await fetch(`${base}/v1/${serviceName}:resolve`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
      await res.arrayBuffer();
      return res.status;
    };
    // The gateway's own rights suffice for both reviews: a 403 here would be PERMISSION_DENIED for the caller, a 503 a refused review.
    expect(await resolve('reader')).toBe(200);
    expect(await resolve('predictor')).toBe(403);
  });
});
