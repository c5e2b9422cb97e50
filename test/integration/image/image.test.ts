/**
 * The container image, built from the real Dockerfile by podman (src/image/) and run as the chart runs it:
 * the operator (two replicas), the gateway and the sign-in API in containers started from the Deployments of
 * deploy/endpoint-operator.yaml (test/support/pod-to-podman.ts: args, env, user 65532, read-only root
 * filesystem, dropped capabilities, no-new-privileges, /tmp as tmpfs), with the in-cluster configuration
 * (a TokenRequest token of their ServiceAccounts, the cluster CA, KUBERNETES_SERVICE_HOST/PORT).
 *
 * This file starts its own control plane: it installs cluster-wide webhook configurations pointing at the
 * container, which would intercept every other test file's objects on the shared one.
 * `podman kube play` of the Deployments was tried (podman 4.3.1): with the host network it refuses the containerPorts
 * ("PortMappings can only be used with Bridge or slirp4netns networking"), and it mounts no service account, so the
 * objects would have to be edited anyway; `podman run` lines derived from them say the same without a pause image.
 * Differences from a cluster, each forced by running on one host: the containers share the host's network
 * (ports moved to free ones), the webhooks are registered by URL (`--webhook-url-host`: the kube-apiserver has
 * no route to a Service), and the model servers run on loopback behind selector-less Services.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import yaml from 'js-yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATEWAY_TLS } from '../../../src/operator/gateway-certificate.js';
import { deployManifests } from '../../../src/deploy/manifests.js';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';
import { DEPLOY_FILE } from '../../../src/deploy/write.js';
import {
  demoBackendPlan,
  publishDemoBackends,
  startDemoBackends,
  stopDemoBackends,
  type RunningDemoBackend,
} from '../../../src/dev-environment/demo-backends.js';
import { DEMO_INSTANCE } from '../../../src/dev-environment/demo-calls.js';
import { demoPassword, demoSecrets } from '../../../src/dev-environment/demo-secrets.js';
import { defaultExamplesDir, loadExampleObjects } from '../../../src/dev-environment/examples.js';
import { startControlPlane, type ControlPlane } from '../../../src/devcluster/index.js';
import { freeLoopbackPorts } from '../../../src/devcluster/ports.js';
import { buildImage, LOCAL_IMAGE_NAME, type BuiltImage } from '../../../src/image/build.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { kubectl } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { podmanRunPlan } from '../../support/pod-to-podman.js';
import { eventually } from '../reconcilers/harness.js';
import { ImageContainer } from './container.js';
import { serviceAccountDir, serviceAccountToken } from './in-cluster.js';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

const OPERATOR_NS = DEFAULT_DEPLOY_VALUES.namespace;
const EXAMPLES_NS = 'endpoint-demo';
const LEASE = 'endpoint-operator-leader';
/** Container names are machine-wide: another run's containers must not be taken for (or removed as) this run's. */
const RUN = randomBytes(3).toString('hex');
const runName = (name: string): string => `${name}-${RUN}`;
/** The audience of a caller's token for the gateway (issue 22's `--auth-audiences` default). */
const GATEWAY_AUDIENCE = 'endpoint-operator-gateway';

const committed = yaml.loadAll(readFileSync(join(REPO_ROOT, DEPLOY_FILE), 'utf8')) as Doc[];
/** The same install with `signin.enabled=true` (from the generator deploy/ is written by): adds the sign-in port and args, and the Role in its namespace. */
const withSignin = deployManifests({
  ...DEFAULT_DEPLOY_VALUES,
  signin: { ...DEFAULT_DEPLOY_VALUES.signin, enabled: true, namespace: EXAMPLES_NS },
}) as Doc[];
const deploymentOf = (docs: readonly Doc[], name: string): Doc => {
  const d = docs.find((x) => x.kind === 'Deployment' && x.metadata.name === name);
  if (!d) throw new Error(`no Deployment ${name}`);
  return d;
};

/** A test caller of the gateway, with the rights issue 22's authorization checks. */
const CALLER_RBAC = `apiVersion: v1
kind: ServiceAccount
metadata: {name: image-test-caller, namespace: ${EXAMPLES_NS}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: image-test-gateway-caller}
rules:
  - {apiGroups: [prediction.endpoint-operator.dev], resources: [predictionendpoints], verbs: [predict, explain]}
  - {apiGroups: [registry.endpoint-operator.dev], resources: [registryservices], verbs: [resolve, get]}
  - {apiGroups: [registry.endpoint-operator.dev], resources: [registryendpoints], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: image-test-gateway-caller}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: image-test-gateway-caller}
subjects: [{kind: ServiceAccount, name: image-test-caller, namespace: ${EXAMPLES_NS}}]
`;

describe('the container image, run as the chart runs it', () => {
  let image: BuiltImage;
  let plane: ControlPlane;
  let client: KubeClient;
  let backends: RunningDemoBackend[] = [];
  const containers: ImageContainer[] = [];
  const saDirs: string[] = [];
  let password: string;
  let callerToken: string;
  let operatorA: ImageContainer;
  let gateway: ImageContainer;
  const k = (args: string[], input?: string): ReturnType<typeof kubectl> =>
    kubectl(args, { kubeconfig: plane.kubeconfigPath, timeoutMs: 90_000, ...(input === undefined ? {} : { input }) });

  /**
   * What the kubelet does for each Secret volume: the Secret's keys as files (mode 0644, as its defaultMode) in a
   * directory the container mounts read-only. The gateway's certificate Secret is issued by the operator
   * container, which is started (and Ready) first.
   */
  async function secretDirsOf(deployment: Doc): Promise<Map<string, string>> {
    const pod = (
      deployment as unknown as { spec: { template: { spec: { volumes?: { secret?: { secretName: string } }[] } } } }
    ).spec.template.spec;
    const dirs = new Map<string, string>();
    for (const volume of pod.volumes ?? []) {
      if (volume.secret === undefined) continue;
      const name = volume.secret.secretName;
      const secret = await eventually(`Secret ${OPERATOR_NS}/${name}`, () =>
        client.get<KubeObject & { data?: Record<string, string> }>(
          { group: '', version: 'v1', plural: 'secrets', namespaced: true },
          OPERATOR_NS,
          name,
        ),
      );
      const dir = await mkdtemp(join(tmpdir(), 'eo-image-secret-'));
      saDirs.push(dir);
      await chmod(dir, 0o755);
      for (const [key, value] of Object.entries(secret.data ?? {}))
        await writeFile(join(dir, key), Buffer.from(value, 'base64'), { mode: 0o644 });
      dirs.set(name, dir);
    }
    return dirs;
  }

  async function startContainer(
    deployment: Doc,
    container: string,
    podName: string,
    extraArgs: string[] = [],
  ): Promise<ImageContainer> {
    const d = deployment as unknown as {
      spec: {
        template: {
          spec: { serviceAccountName: string; containers: { name: string; ports?: { containerPort: number }[] }[] };
        };
      };
    };
    const declared = d.spec.template.spec.containers.find((c) => c.name === container)?.ports ?? [];
    const free = await freeLoopbackPorts(declared.length);
    const hostPorts = new Map(declared.map((p, i) => [p.containerPort, free[i]!] as const));
    const dir = await serviceAccountDir({
      kubeconfig: plane.kubeconfigPath,
      caFile: plane.caFile,
      namespace: OPERATOR_NS,
      serviceAccount: d.spec.template.spec.serviceAccountName,
    });
    saDirs.push(dir);
    const secretDirs = await secretDirsOf(deployment);
    const apiserver = new URL(plane.server);
    const plan = podmanRunPlan(deployment, container, {
      image: image.id,
      podName,
      hostPorts,
      serviceAccountDir: dir,
      apiserver: { host: apiserver.hostname, port: Number(apiserver.port) },
      extraArgs,
      secretDirs,
    });
    const c = await ImageContainer.start(podName, plan);
    containers.push(c);
    await c.waitReady();
    return c;
  }

  beforeAll(async () => {
    image = await buildImage({ contextDir: REPO_ROOT, name: LOCAL_IMAGE_NAME });
    plane = await startControlPlane({});
    client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    // The install as a user makes it. Its Deployments get simulated Pods on the kwok Nodes, which answer
    // nothing: the containers below are what serves.
    const installed = [
      ...committed,
      ...withSignin.filter(
        (w) =>
          !committed.some(
            (c) =>
              c.kind === w.kind && c.metadata.name === w.metadata.name && c.metadata.namespace === w.metadata.namespace,
          ),
      ),
    ];
    const ns = await k(['create', 'namespace', EXAMPLES_NS]);
    expect(ns.code, ns.stderr).toBe(0);
    const created = await k(['create', '-f', '-'], installed.map((d) => yaml.dump(d)).join('---\n'));
    expect(created.code, created.stderr).toBe(0);

    const objects = await loadExampleObjects(defaultExamplesDir());
    backends = await startDemoBackends(demoBackendPlan(objects), [], plane.modelHost);
    operatorA = await startContainer(
      deploymentOf(withSignin, 'endpoint-operator'),
      'operator',
      runName('endpoint-operator-a'),
      ['--webhook-url-host=127.0.0.1'],
    );
    gateway = await startContainer(
      deploymentOf(committed, 'endpoint-operator-gateway'),
      'gateway',
      runName('endpoint-operator-gateway'),
    );

    password = demoPassword();
    const secrets = (await demoSecrets(objects, password)).map((s) => yaml.dump(s.secret)).join('---\n');
    const applied = await k(['apply', '-f', '-'], `${secrets}---\n${objects.map((o) => yaml.dump(o)).join('---\n')}`);
    expect(applied.code, `${applied.stderr}\n${await operatorA.logTail()}`).toBe(0);
    await publishDemoBackends(client, backends, plane.modelHost.address);
    const rbac = await k(['apply', '-f', '-'], CALLER_RBAC);
    expect(rbac.code, rbac.stderr).toBe(0);
    callerToken = await serviceAccountToken(plane.kubeconfigPath, EXAMPLES_NS, 'image-test-caller', [GATEWAY_AUDIENCE]);
  }, 900_000);

  afterAll(async () => {
    for (const c of containers) await c.remove();
    await stopDemoBackends(backends);
    client?.close();
    await plane?.stop();
    for (const dir of saDirs) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('adds at most 40 MB to its base image', () => {
    const added = image.sizeBytes - image.baseSizeBytes;
    console.log(
      `image ${image.name}: ${(image.sizeBytes / 1e6).toFixed(1)} MB, ${(added / 1e6).toFixed(1)} MB on top of ${image.base} (${(image.baseSizeBytes / 1e6).toFixed(1)} MB); build ${image.seconds.toFixed(0)} s`,
    );
    expect(added).toBeLessThanOrEqual(40e6);
  });

  it('runs on a read-only root filesystem with /tmp writable, as uid 65532 without capabilities', async () => {
    const root = await operatorA.exec(['node', '-e', "require('fs').writeFileSync('/app/probe', 'x')"]);
    expect(root.code).not.toBe(0);
    expect(root.output).toContain('EROFS');
    const tmp = await operatorA.exec([
      'node',
      '-e',
      "require('fs').writeFileSync('/tmp/probe', 'x'); console.log(process.getuid(), process.getgid())",
    ]);
    expect(tmp.code, tmp.output).toBe(0);
    expect(tmp.output.trim()).toBe('65532 65532');
    const caps = await operatorA.exec(['grep', '^CapEff', '/proc/self/status']);
    expect(caps.output.trim()).toBe('CapEff:\t0000000000000000');
  });

  it('converges the examples to Ready with the operator in its container', async () => {
    let waiting = '';
    await eventually(
      'every example Ready',
      async () => {
        const r = await k(['get', 'endpoint-operator', '-n', EXAMPLES_NS, '-o', 'json']);
        if (r.code !== 0) return undefined;
        const items = (JSON.parse(r.stdout) as { items: KubeObject[] }).items;
        const readyOf = (o: KubeObject) =>
          (
            (
              o.status as
                { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined
            )?.conditions ?? []
          ).find((c) => c.type === 'Ready');
        const notReady = items.filter((o) => readyOf(o)?.status !== 'True');
        // Said on a timeout: which objects, and why.
        waiting = notReady
          .map((o) => `${o.kind}/${o.metadata.name}: ${readyOf(o)?.reason ?? 'no Ready'} ${readyOf(o)?.message ?? ''}`)
          .join('; ');
        return items.length > 0 && notReady.length === 0 ? items : undefined;
      },
      120_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; not Ready: ${waiting}; operator log: ${await operatorA.logTail()}`);
    });
  }, 150_000);

  it('answers the kube-apiserver with the admission and conversion webhooks served from the container', async () => {
    const webhookPort = operatorA.port('webhook');
    const vwc = await k([
      'get',
      'validatingwebhookconfigurations',
      '-o',
      'jsonpath={.items[*].webhooks[*].clientConfig.url}',
    ]);
    expect(vwc.stdout).toContain(`https://127.0.0.1:${webhookPort}/`);
    const invalid = await k([
      'apply',
      '-f',
      join(REPO_ROOT, 'examples/invalid/prediction/pe-bigquery-table-too-long.yaml'),
      '-n',
      EXAMPLES_NS,
    ]);
    expect(invalid.code).not.toBe(0);
    // A rule only the webhook enforces (the CRD cannot count a part's UTF-8 bytes), so only the webhook can have
    // written this message; it answers a 422 Status, which kubectl shows as "is invalid".
    expect(invalid.stderr).toMatch(
      /spec\.predictRequestResponseLoggingConfig\.bigqueryDestination\.outputUri: Invalid value: .*1024 UTF-8 bytes/,
    );
    // Stored as v1; read as v1beta1, the kube-apiserver asks the conversion webhook (v1beta1 calls annotations `metadata`).
    const beta = await k([
      'get',
      'registryendpoints.v1beta1.registry.endpoint-operator.dev',
      '-n',
      EXAMPLES_NS,
      '-o',
      'json',
    ]);
    expect(beta.code, beta.stderr).toBe(0);
    const items = (JSON.parse(beta.stdout) as { items: { apiVersion: string; spec: Record<string, unknown> }[] }).items;
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(item.apiVersion).toBe('registry.endpoint-operator.dev/v1beta1');
      expect(item.spec).not.toHaveProperty('annotations');
    }
    expect(items.some((i) => i.spec['metadata'] !== undefined)).toBe(true);
  });

  it('serves a predict routed by the split and a resolve from the gateway container', async () => {
    // The gateway serves TLS with the certificate the operator container issued: trusted through its CA, as clients do.
    const tlsSecret = await client.get<KubeObject & { data?: Record<string, string> }>(
      { group: '', version: 'v1', plural: 'secrets', namespaced: true },
      OPERATOR_NS,
      DEFAULT_GATEWAY_TLS.secretName,
    );
    const dispatcher = new Agent({ connect: { ca: Buffer.from(tlsSecret?.data?.['ca.crt'] ?? '', 'base64') } });
    const fetch = (url: string, init: Parameters<typeof undiciFetch>[1]) => undiciFetch(url, { ...init, dispatcher });
    const base = `https://localhost:${gateway.port('http')}`;
    const pe = JSON.parse((await k(['get', 'pe', 'fraud-scoring', '-n', EXAMPLES_NS, '-o', 'json'])).stdout) as {
      spec: { trafficSplit: Record<string, number> };
      status: { name: string };
    };
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${callerToken}` };
    const seen = new Map<string, number>();
    // 40 calls of a 70/30 split: the chance that either model is never picked is below 1e-6.
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${base}/v1/${pe.status.name}:predict`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ instances: [DEMO_INSTANCE] }),
      });
      const body = (await res.json()) as { deployedModelId?: string; predictions?: unknown[] };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.predictions).toHaveLength(1);
      seen.set(body.deployedModelId ?? '', (seen.get(body.deployedModelId ?? '') ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(
      Object.keys(pe.spec.trafficSplit)
        .filter((id) => (pe.spec.trafficSplit[id] ?? 0) > 0)
        .sort(),
    );

    const service = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout';
    const res = await fetch(`${base}/v1/${service}:resolve`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ maxEndpoints: 10 }),
    });
    const resolved = (await res.json()) as { service?: { name?: string; endpoints?: { address?: string }[] } };
    expect(res.status, JSON.stringify(resolved)).toBe(200);
    expect(resolved.service?.name).toBe(service);
    expect(resolved.service?.endpoints?.length).toBeGreaterThan(0);
  });

  it('answers a sign-in from the operator container', async () => {
    const res = await fetch(`http://127.0.0.1:${operatorA.port('signin')}/auth/pos/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ana.silva@example.com', password }),
    });
    const body = (await res.json()) as { status?: string; accessToken?: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe('authenticated');
    expect(body.accessToken).toMatch(/^ey/);
  });

  it('stops on SIGTERM within the grace period with exit code 0, handing the lease to the other replica at once', async () => {
    const operatorB = await startContainer(
      deploymentOf(withSignin, 'endpoint-operator'),
      'operator',
      runName('endpoint-operator-b'),
      ['--webhook-url-host=127.0.0.1'],
    );
    const holder = async (): Promise<string | undefined> => {
      const r = await k(['get', 'lease', LEASE, '-n', OPERATOR_NS, '-o', 'jsonpath={.spec.holderIdentity}']);
      return r.code === 0 ? r.stdout.trim() : undefined;
    };
    expect(await holder()).toBe(runName('endpoint-operator-a'));
    const stopped = await operatorA.stop();
    expect(stopped.exitCode, await operatorA.logTail()).toBe(0);
    expect(stopped.seconds).toBeLessThan(operatorA.plan.graceSeconds);
    const handedOver = Date.now();
    await eventually(
      'replica b holds the lease',
      async () => ((await holder()) === runName('endpoint-operator-b') ? true : undefined),
      30_000,
    );
    const takeover = (Date.now() - handedOver) / 1000;
    console.log(
      `operator a stopped in ${stopped.seconds.toFixed(1)} s; b took the lease ${takeover.toFixed(1)} s later`,
    );
    // The lease lasts 15 s: a released one is taken on the follower's next try (retry period 2 s).
    expect(takeover).toBeLessThan(8);

    const gw = await gateway.stop();
    expect(gw.exitCode, await gateway.logTail()).toBe(0);
    expect(gw.seconds).toBeLessThan(gateway.plan.graceSeconds);
    const b = await operatorB.stop();
    expect(b.exitCode, await operatorB.logTail()).toBe(0);
  }, 180_000);
});
