/**
 * A real custom-metrics API for a test's own control plane: the test adapter of sigs.k8s.io/custom-metrics-apiserver
 * (tools/custom-metrics-adapter; the library prometheus-adapter is written on, which the Go module proxy here does
 * not serve), an aggregated API server registered as custom.metrics.k8s.io through the kube-apiserver's aggregation
 * layer, as a cluster registers prometheus-adapter. It answers the values a test writes to it over HTTP, so a test
 * sees what kube-controller-manager's HPA controller does with a metric, not how the metric is computed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';
import { acceptsOnLoopback, running } from './local-process.js';
import { freeLoopbackPort } from '../../dev/cluster/ports.js';
import { kubectl } from './cluster.js';

/** The custom-metrics-apiserver release tools/custom-metrics-adapter/go.mod requires. */
export const CUSTOM_METRICS_ADAPTER: GoModuleBuild = {
  module: 'custom-metrics-adapter',
  version: 'custom-metrics-apiserver-v1.37.0',
  binaries: ['test-adapter'],
};

/** The test adapter's value-writing endpoint: a fixed port (`:8080`) in its main.go, on every interface. */
const WRITE_PORT = 8080;
const SERVICE = { name: 'custom-metrics-adapter', namespace: 'kube-system' } as const;

/**
 * How a cluster registers a custom-metrics adapter: its APIServices (v1beta2, which the HPA controller prefers, and
 * v1beta1), and read access for the HPA controller's ServiceAccount. The Service is an ExternalName of localhost:
 * the aggregator dials an ExternalName's host, which reaches the adapter on this machine's loopback.
 */
function registration(securePort: number): string {
  const apiService = (version: string, priority: number): string => `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: { name: ${version}.custom.metrics.k8s.io }
spec:
  group: custom.metrics.k8s.io
  version: ${version}
  service: { name: ${SERVICE.name}, namespace: ${SERVICE.namespace}, port: ${securePort} }
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: ${priority}
`;
  return [
    `apiVersion: v1\nkind: Service\nmetadata: { name: ${SERVICE.name}, namespace: ${SERVICE.namespace} }\nspec: { type: ExternalName, externalName: localhost }\n`,
    apiService('v1beta2', 200),
    apiService('v1beta1', 100),
    'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: { name: custom-metrics-reader }\nrules: [{ apiGroups: [custom.metrics.k8s.io], resources: ["*"], verbs: [get, list, watch] }]\n',
    'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: { name: hpa-controller-custom-metrics }\n' +
      'roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: custom-metrics-reader }\n' +
      'subjects: [{ kind: ServiceAccount, name: horizontal-pod-autoscaler, namespace: kube-system }]\n',
  ].join('---\n');
}

export class CustomMetricsAdapter {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly output: () => string,
  ) {}

  /**
   * Starts the adapter against the cluster of `kubeconfig` (it authenticates and authorises the aggregator's calls
   * with that cluster, and reads the objects a metric describes), registers it, and resolves once the kube-apiserver
   * serves custom.metrics.k8s.io from it.
   */
  static async start(kubeconfig: string): Promise<CustomMetricsAdapter> {
    const binary = (await ensureGoBuild(CUSTOM_METRICS_ADAPTER))['test-adapter'];
    if (binary === undefined)
      throw new Error('no test-adapter among the built binaries of tools/custom-metrics-adapter');
    if (await acceptsOnLoopback(WRITE_PORT))
      throw new Error(
        `port ${WRITE_PORT}, where the custom-metrics test adapter takes metric values, is already in use on this machine`,
      );
    const dir = await mkdtemp(join(tmpdir(), 'eo-custom-metrics-'));
    const securePort = await freeLoopbackPort();
    const child = spawn(
      binary,
      [
        `--secure-port=${securePort}`,
        '--bind-address=127.0.0.1',
        `--cert-dir=${dir}`,
        `--lister-kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-50_000)));
    const adapter = new CustomMetricsAdapter(child, dir, () => output);
    try {
      const deadline = Date.now() + 60_000;
      while (!((await acceptsOnLoopback(securePort)) && (await acceptsOnLoopback(WRITE_PORT)))) {
        if (!running(child))
          throw new Error(`the custom-metrics adapter exited (${child.exitCode ?? child.signalCode}):\n${output}`);
        if (Date.now() > deadline) throw new Error(`the custom-metrics adapter did not listen within 60 s:\n${output}`);
        await sleep(100);
      }
      const applied = await kubectl(['apply', '-f', '-'], { input: registration(securePort), kubeconfig });
      if (applied.code !== 0) throw new Error(`registering the custom-metrics adapter failed: ${applied.stderr}`);
      const available = await kubectl(
        [
          'wait',
          '--for=condition=Available',
          'apiservice/v1beta2.custom.metrics.k8s.io',
          'apiservice/v1beta1.custom.metrics.k8s.io',
          '--timeout=60s',
        ],
        { kubeconfig, timeoutMs: 70_000 },
      );
      if (available.code !== 0)
        throw new Error(`custom.metrics.k8s.io did not become Available: ${available.stderr}\n${output}`);
    } catch (err) {
      await adapter.stop();
      throw err;
    }
    return adapter;
  }

  /**
   * Sets `metric` of the object `resource` (`plural.group`) `namespace/name` to `value` (a quantity), as an adapter
   * would compute it; the HPA controller reads it through the kube-apiserver.
   */
  async write(namespace: string, resource: string, name: string, metric: string, value: string): Promise<void> {
    const res = await fetch(
      `http://127.0.0.1:${WRITE_PORT}/write-metrics/namespaces/${namespace}/${resource}/${name}/${metric}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(value),
        signal: AbortSignal.timeout(5_000),
      },
    );
    if (!res.ok)
      throw new Error(`the custom-metrics adapter refused ${metric}=${value} (${res.status}): ${await res.text()}`);
  }

  get log(): string {
    return this.output();
  }

  /** Ends the adapter. Its APIServices stay: the cluster they are registered in is the test's own. */
  async stop(): Promise<void> {
    if (running(this.child)) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000).then(() => this.child.kill('SIGKILL'))]);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
