import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { crdsYaml } from '../../../src/api/crd/generate.js';
import { KEEP_ANNOTATION } from '../../../src/deploy/crd-templates.js';
import { RUN_FLAGS, runConfig } from '../../../src/cli/run.js';
import { parseFlags } from '../../../src/cli/flags.js';
import { deployManifests, deployYaml, type Manifest } from '../../../src/deploy/manifests.js';
import { DEFAULT_DEPLOY_VALUES, gatewaySelectorLabels, type DeployValues } from '../../../src/deploy/values.js';
import { OPERATOR_NODE_FLAGS, runArgs } from '../../../src/deploy/workload.js';
import { DEPLOY_FILE } from '../../../src/deploy/write.js';
import { REPO_ROOT } from '../../support/examples.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import { GATEWAY_FLAGS, gatewayConfig } from '../../../src/cli/gateway.js';
import { GATEWAY_NODE_FLAGS, GATEWAY_PRESTOP_SECONDS, gatewayArgs } from '../../../src/deploy/gateway.js';
import { DEFAULT_MAX_BODY_BYTES_PER_CALLER, DEFAULT_MAX_CALLS_PER_CALLER } from '../../../src/gateway/fairness.js';
import { GATEWAY_SERVER_LIMITS } from '../../../src/http/server-limits.js';

type Obj = Record<string, unknown>;

/** A metrics scraper's pods, as `modelNetworkPolicy.extraIngressFrom` names them (keys out of order: the flag's JSON sorts them). */
const SCRAPER = { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } }, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };

function find(objects: Manifest[], kind: string, name?: string): Obj {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind}${name ? ` ${name}` : ''} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found as unknown as Obj;
}

function at(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, key) => (o === undefined || o === null ? undefined : (o as Obj)[key]), obj);
}

function container(objects: Manifest[]): Obj {
  const containers = at(find(objects, 'Deployment'), 'spec.template.spec.containers') as Obj[];
  expect(containers).toHaveLength(1);
  return containers[0] as Obj;
}

function withValues(patch: (v: DeployValues) => void): DeployValues {
  const v = structuredClone(DEFAULT_DEPLOY_VALUES);
  patch(v);
  return v;
}

describe('deploy/endpoint-operator.yaml', () => {
  it('is what the generator writes for the default values (run `npm run generate` after changing src/)', () => {
    const committed = readFileSync(join(REPO_ROOT, DEPLOY_FILE), 'utf8');
    expect(committed).toBe(deployYaml(DEFAULT_DEPLOY_VALUES));
  });

  it('carries the same CRDs as crds/ for the default namespace, annotated for Helm to keep them on uninstall', () => {
    const fromDeploy = deployManifests(DEFAULT_DEPLOY_VALUES).filter((m) => m.kind === 'CustomResourceDefinition');
    const fromCrds = (yaml.loadAll(crdsYaml()) as (Manifest & { metadata: object })[]).map((crd) => ({ ...crd, metadata: { ...crd.metadata, annotations: KEEP_ANNOTATION } }));
    expect(fromDeploy).toEqual(fromCrds);
  });

  it('names every object once, with a namespace exactly when it is namespaced', () => {
    const objects = deployManifests(withValues((v) => (v.signin.enabled = true)));
    const clusterScoped = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const keys = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const o of objects) expect(o.metadata.namespace === undefined, `${o.kind}/${o.metadata.name}`).toBe(clusterScoped.has(o.kind));
  });
});

describe('the Deployment', () => {
  const objects = deployManifests(DEFAULT_DEPLOY_VALUES);

  it('runs two replicas with leader election, a PodDisruptionBudget keeping one', () => {
    expect(at(find(objects, 'Deployment'), 'spec.replicas')).toBe(2);
    expect(container(objects).args).toContain('--leader-elect=true');
    const pdb = find(objects, 'PodDisruptionBudget');
    expect(at(pdb, 'spec.minAvailable')).toBe(1);
    expect(at(pdb, 'spec.selector.matchLabels')).toEqual(at(find(objects, 'Deployment'), 'spec.selector.matchLabels'));
  });

  it('is locked down: non-root 65532, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp', () => {
    expect(container(objects).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('probes /healthz and /readyz on the health port and exposes webhook, metrics and health', () => {
    const c = container(objects);
    expect(at(c, 'livenessProbe.httpGet')).toEqual({ path: '/healthz', port: 'health' });
    expect(at(c, 'readinessProbe.httpGet')).toEqual({ path: '/readyz', port: 'health' });
    expect(c.ports).toEqual([
      { name: 'webhook', containerPort: 9443, protocol: 'TCP' },
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(c.env).toEqual([
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'MALLOC_ARENA_MAX', value: '2' },
    ]);
    expect(c.resources).toEqual(DEFAULT_DEPLOY_VALUES.resources);
  });

  it('passes args that `endpoint-operator run` accepts and that mean the values', () => {
    const values = withValues((v) => {
      v.project = 'p1-{namespace}';
      v.location = 'l1';
      v.gateway.url = 'https://predict.example.com';
      v.reservedPrefixes = ['a.example.com', 'b.example.com'];
      v.leaderElection = false;
      v.signin = { enabled: true, namespace: 'shops', port: 9000, trustedProxies: '2', limits: { headersTimeoutSeconds: 2.5, requestTimeoutSeconds: 20, keepAliveTimeoutSeconds: 4, maxConnections: 500, verifyConcurrency: 3, verifyPerClient: 2, verifyQueue: 64 } };
      v.modelNetworkPolicy.extraIngressFrom = [SCRAPER];
    });
    const [command, ...flags] = runArgs(values);
    expect(command).toBe('run');
    const config = runConfig(parseFlags(RUN_FLAGS, flags, { POD_NAMESPACE: 'ops' }));
    expect(config.operator).toMatchObject({ project: 'p1-{namespace}', location: 'l1', gatewayUrl: 'https://predict.example.com', reservedPrefixes: ['a.example.com', 'b.example.com'], healthPort: 8081, metricsPort: 8080 });
    expect(config.operator.leaderElection.enabled).toBe(false);
    expect(config.signin).toMatchObject({ namespace: 'shops', host: '0.0.0.0', port: 9000, trustedProxies: 2 });
    expect(config.signin?.serverLimits).toEqual({ headersTimeoutMs: 2500, requestTimeoutMs: 20_000, keepAliveTimeoutMs: 4000, maxConnections: 500 });
    expect(config.signin?.verificationLimits).toEqual({ concurrency: 3, perClient: 2, queueLength: 64 });
    expect(config.webhook?.listen.port).toBe(9443);
    // The chart's gateway pods, in the operator namespace (the pod's own), and the scraper.
    expect(config.operator.modelNetworkPolicy).toEqual({ gatewayNamespace: 'ops', gatewayPodLabels: gatewaySelectorLabels(), extraIngressFrom: [SCRAPER] });
    const off = runArgs(withValues((v) => (v.modelNetworkPolicy = { enabled: false, extraIngressFrom: [SCRAPER] })));
    expect(runConfig(parseFlags(RUN_FLAGS, off.slice(1), {})).operator.modelNetworkPolicy).toBeUndefined();
  });

  it('fronts the webhooks with Service endpoint-operator-webhook 443 → the webhook port, as the webhook configuration and CRD conversion expect', () => {
    const svc = find(objects, 'Service', 'endpoint-operator-webhook');
    expect(at(svc, 'spec.ports')).toEqual([{ name: 'https', port: 443, targetPort: 'webhook', protocol: 'TCP' }]);
    expect(at(svc, 'spec.selector')).toEqual(at(find(objects, 'Deployment'), 'spec.selector.matchLabels'));
    const vwc = find(objects, 'ValidatingWebhookConfiguration');
    expect(at((at(vwc, 'webhooks') as Obj[])[0], 'clientConfig.service')).toEqual({ namespace: 'endpoint-operator-system', name: 'endpoint-operator-webhook', path: '/validate', port: 443 });
  });

  it('moves everything to another namespace, and renders the optional ServiceMonitor and sign-in pieces only when enabled', () => {
    expect(objects.some((o) => o.kind === 'ServiceMonitor' || o.metadata.name === 'endpoint-operator-signin')).toBe(false);
    const other = deployManifests(withValues((v) => {
      v.namespace = 'ops';
      v.serviceMonitor.enabled = true;
      v.signin = { ...v.signin, enabled: true, namespace: 'shops' };
    }));
    for (const o of other) if (o.metadata.namespace !== undefined) expect(['ops', 'shops'], `${o.kind}/${o.metadata.name}`).toContain(o.metadata.namespace);
    expect(at(find(other, 'ServiceMonitor'), 'spec.endpoints')).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s', honorLabels: true, bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }]);
    expect(find(other, 'Service', 'endpoint-operator-signin')).toBeDefined();
    expect(find(other, 'Role', 'endpoint-operator-signin').metadata).toMatchObject({ namespace: 'shops' });
    const crd = find(other, 'CustomResourceDefinition', 'registryendpoints.registry.endpoint-operator.dev');
    expect(at(crd, 'spec.conversion.webhook.clientConfig.service')).toMatchObject({ namespace: 'ops', name: 'endpoint-operator-webhook' });
  });
});

describe('the gateway Deployment', () => {
  it('passes args that `endpoint-operator gateway` accepts and that mean the auth values', () => {
    const values = structuredClone(DEFAULT_DEPLOY_VALUES);
    values.project = 'acme-{namespace}';
    values.gateway.auth = { ...values.gateway.auth, audiences: ['a', 'b'], tokenTTLSeconds: 30, reviewsPerSecond: 50 };
    const args = gatewayArgs(values);
    expect(args[0]).toBe('gateway');
    const config = gatewayConfig(parseFlags(GATEWAY_FLAGS, args.slice(1), {}));
    expect(config.auth).toEqual({ ...DEFAULT_AUTH_SETTINGS, audiences: ['a', 'b'], tokenSuccessTtlMs: 30_000, reviewsPerSecond: 50, projectTemplate: 'acme-{namespace}' });
    expect(gatewayConfig(parseFlags(GATEWAY_FLAGS, gatewayArgs(DEFAULT_DEPLOY_VALUES).slice(1), {})).auth).toEqual(DEFAULT_AUTH_SETTINGS);
  });

  it('passes the limit values as the flags of the API port and of per-caller fairness', () => {
    const values = structuredClone(DEFAULT_DEPLOY_VALUES);
    values.gateway.limits = { headersTimeoutSeconds: 5, requestTimeoutSeconds: 120, keepAliveTimeoutSeconds: 30, maxConnections: 10_000, maxCallsPerCaller: 16, maxBodyBytesPerCaller: 12_000_000 };
    const config = gatewayConfig(parseFlags(GATEWAY_FLAGS, gatewayArgs(values).slice(1), {}));
    expect(config).toMatchObject({ serverLimits: { headersTimeoutMs: 5000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 30_000, maxConnections: 10_000 }, maxCallsPerCaller: 16, maxBodyBytesPerCaller: 12_000_000 });
    const defaults = gatewayConfig(parseFlags(GATEWAY_FLAGS, gatewayArgs(DEFAULT_DEPLOY_VALUES).slice(1), {}));
    expect(defaults).toMatchObject({ serverLimits: GATEWAY_SERVER_LIMITS, maxCallsPerCaller: DEFAULT_MAX_CALLS_PER_CALLER, maxBodyBytesPerCaller: DEFAULT_MAX_BODY_BYTES_PER_CALLER });
  });

  it('keeps all but one pod serving through drains (its PodDisruptionBudget) and a pod serving after its deletion until kube-proxy has dropped it (a preStop sleep)', () => {
    const objects = deployManifests(DEFAULT_DEPLOY_VALUES);
    const gateway = find(objects, 'Deployment', 'endpoint-operator-gateway');
    const pdb = find(objects, 'PodDisruptionBudget', 'endpoint-operator-gateway');
    expect(at(pdb, 'spec.maxUnavailable')).toBe(1);
    expect(at(pdb, 'spec.selector.matchLabels')).toEqual(at(gateway, 'spec.selector.matchLabels'));
    const [c] = at(gateway, 'spec.template.spec.containers') as Obj[];
    expect(c?.['lifecycle']).toEqual({ preStop: { sleep: { seconds: GATEWAY_PRESTOP_SECONDS } } });
    expect(GATEWAY_PRESTOP_SECONDS).toBeLessThan(at(gateway, 'spec.template.spec.terminationGracePeriodSeconds') as number);
  });

  it('places the operator and the gateway on the nodes the values name, and leaves placement to the scheduler by default', () => {
    const values = structuredClone(DEFAULT_DEPLOY_VALUES);
    values.nodeSelector = { pool: 'system' };
    values.gateway.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'serving', effect: 'NoSchedule' }];
    const objects = deployManifests(values);
    const spec = (name: string) => at(find(objects, 'Deployment', name), 'spec.template.spec') as Obj;
    expect(spec('endpoint-operator')).toMatchObject({ nodeSelector: { pool: 'system' } });
    expect(spec('endpoint-operator')).not.toHaveProperty('tolerations');
    expect(spec('endpoint-operator-gateway')).toMatchObject({ tolerations: values.gateway.tolerations });
    expect(spec('endpoint-operator-gateway')).not.toHaveProperty('nodeSelector');
    for (const name of ['endpoint-operator', 'endpoint-operator-gateway']) {
      const defaults = at(find(deployManifests(DEFAULT_DEPLOY_VALUES), 'Deployment', name), 'spec.template.spec') as Obj;
      expect(defaults).not.toHaveProperty('nodeSelector');
      expect(defaults).not.toHaveProperty('tolerations');
    }
  });
});

describe("the operator's and the gateway's containers", () => {
  it.each([
    ['endpoint-operator-gateway', GATEWAY_NODE_FLAGS],
    ['endpoint-operator', OPERATOR_NODE_FLAGS],
  ])("runs the image's ENTRYPOINT in %s with node flags that this Node accepts on its command line", (name, flags) => {
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'))?.[1];
    const [node, ...script] = JSON.parse(entrypoint ?? 'null') as string[];
    const container = at(find(deployManifests(DEFAULT_DEPLOY_VALUES), 'Deployment', name), 'spec.template.spec.containers') as Obj[];
    expect(container[0]?.['command']).toEqual([node, ...flags, ...script]);
    // A V8 flag Node does not know, or one only NODE_OPTIONS takes, would stop the container at start.
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.exit(0)'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
  });
});
