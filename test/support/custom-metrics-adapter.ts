/**
 * A real custom-metrics API for a test's own control plane: the test adapter of sigs.k8s.io/custom-metrics-apiserver
 * (tools/custom-metrics-adapter; the library prometheus-adapter is written on, which the Go module proxy here does
 * not serve), an aggregated API server registered as custom.metrics.k8s.io through the kube-apiserver's aggregation
 * layer, as a cluster registers prometheus-adapter. It answers the values a test writes to it over HTTP, so a test
 * sees what kube-controller-manager's HPA controller does with a metric, not how the metric is computed.
 */
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';
import { AggregatedApi } from './aggregated-api.js';
import { acceptsOnLoopback } from './local-process.js';

/** The custom-metrics-apiserver release tools/custom-metrics-adapter/go.mod requires. */
export const CUSTOM_METRICS_ADAPTER: GoModuleBuild = {
  module: 'custom-metrics-adapter',
  version: 'custom-metrics-apiserver-v1.37.0',
  binaries: ['test-adapter'],
};

/** The test adapter's value-writing endpoint: a fixed port (`:8080`) in its main.go, on every interface. */
const WRITE_PORT = 8080;

/** Read access for the HPA controller's ServiceAccount to the custom metrics. */
const HPA_READER =
  'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: { name: custom-metrics-reader }\nrules: [{ apiGroups: [custom.metrics.k8s.io], resources: ["*"], verbs: [get, list, watch] }]\n---\n' +
  'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: { name: hpa-controller-custom-metrics }\n' +
  'roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: custom-metrics-reader }\n' +
  'subjects: [{ kind: ServiceAccount, name: horizontal-pod-autoscaler, namespace: kube-system }]\n';

export class CustomMetricsAdapter {
  private constructor(private readonly api: AggregatedApi) {}

  /**
   * Starts the adapter against the cluster of `kubeconfig` (it authenticates and authorises the aggregator's calls
   * with that cluster, and reads the objects a metric describes), registers it (v1beta2, which the HPA controller
   * prefers, and v1beta1), and resolves once the kube-apiserver serves custom.metrics.k8s.io from it.
   */
  static async start(kubeconfig: string): Promise<CustomMetricsAdapter> {
    const binary = (await ensureGoBuild(CUSTOM_METRICS_ADAPTER))['test-adapter'];
    if (binary === undefined)
      throw new Error('no test-adapter among the built binaries of tools/custom-metrics-adapter');
    if (await acceptsOnLoopback(WRITE_PORT))
      throw new Error(
        `port ${WRITE_PORT}, where the custom-metrics test adapter takes metric values, is already in use on this machine`,
      );
    const api = await AggregatedApi.start({
      what: 'the custom-metrics adapter',
      binary,
      args: ({ address, securePort, certDir }) => [
        `--secure-port=${securePort}`,
        `--bind-address=${address}`,
        `--cert-dir=${certDir}`,
        `--lister-kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
      ],
      kubeconfig,
      service: 'custom-metrics-adapter',
      group: 'custom.metrics.k8s.io',
      versions: [
        { version: 'v1beta2', priority: 200 },
        { version: 'v1beta1', priority: 100 },
      ],
      extraObjects: [HPA_READER],
      alsoListensOn: [WRITE_PORT],
    });
    return new CustomMetricsAdapter(api);
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
    return this.api.log;
  }

  /** Ends the adapter. Its APIServices stay: the cluster they are registered in is the test's own. */
  stop(): Promise<void> {
    return this.api.stop();
  }
}
