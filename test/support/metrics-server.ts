/**
 * metrics-server (sigs.k8s.io/metrics-server, tools/metrics-server) for a test's own control plane: the resource
 * metrics API (metrics.k8s.io) that kube-controller-manager's HPA controller reads pods' CPU from and `kubectl top`
 * shows. It runs on this machine against the plane's kubeconfig (a plane with the real node), registered as
 * APIService v1beta1.metrics.k8s.io through the aggregation layer (aggregated-api.ts), as a cluster registers its
 * Deployment, and scrapes the kubelet's `/metrics/resource` (the real node's cAdvisor figures of its pods' cgroups).
 */
import { dirname } from 'node:path';
import { kubeletClientFiles } from '../../dev/cluster/credentials.js';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';
import type { ControlPlane } from '../../dev/cluster/index.js';
import { NODE_HOST_ADDRESS } from '../../dev/cluster/real-node/node-network.js';
import { AggregatedApi } from './aggregated-api.js';

const VERSION = 'v0.9.0';

/** The release tools/metrics-server/go.mod requires; `--version` prints what `-X` sets. */
export const METRICS_SERVER: GoModuleBuild = {
  module: 'metrics-server',
  version: VERSION,
  binaries: ['metrics-server'],
  ldflags: [`-X k8s.io/client-go/pkg/version.gitVersion=${VERSION}`],
  versionCheck: { args: () => ['--version'], expect: VERSION },
};

/**
 * How often it scrapes the kubelets: its minimum (the default is 60 s). A CPU figure is a rate between two scrapes, so
 * the HPA sees a load's CPU one to two periods after it began.
 */
export const METRIC_RESOLUTION_SECONDS = 10;

export async function ensureMetricsServer(): Promise<string> {
  const binary = (await ensureGoBuild(METRICS_SERVER))['metrics-server'];
  if (binary === undefined) throw new Error('no metrics-server among the built binaries of tools/metrics-server');
  return binary;
}

export class MetricsServer {
  private constructor(private readonly api: AggregatedApi) {}

  /**
   * Starts metrics-server against `plane` (its kubeconfig; the aggregator's calls are authenticated and authorised
   * by that cluster), registers it, and resolves once the kube-apiserver serves metrics.k8s.io from it. Only the
   * nodes `nodeSelector` picks are scraped (a simulated node has no kubelet).
   */
  static async start(plane: ControlPlane, nodeSelector: string): Promise<MetricsServer> {
    const binary = await ensureMetricsServer();
    const kubeconfig = plane.kubeconfigPath;
    // The real node's kubelet admits client certificates of the cluster's CA only (no token webhook): the
    // kube-apiserver's own, as metrics-server is often given on clusters without kubelet token authentication.
    const client = kubeletClientFiles(dirname(plane.caFile));
    const api = await AggregatedApi.start({
      what: 'metrics-server',
      binary,
      // The real node's cluster routes the aggregator to endpoints, which cannot be loopback (aggregated-api.ts).
      address: NODE_HOST_ADDRESS,
      args: ({ address, securePort, certDir }) => [
        `--secure-port=${securePort}`,
        `--bind-address=${address}`,
        `--cert-dir=${certDir}`,
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        `--node-selector=${nodeSelector}`,
        `--kubelet-client-certificate=${client.certFile}`,
        `--kubelet-client-key=${client.keyFile}`,
        // The real node's kubelet serves a self-signed certificate, as kubeadm's kubelets do by default.
        '--kubelet-insecure-tls',
        // It listens on this machine's loopback only, which the Node's Hostname address names (as for the kube-apiserver).
        '--kubelet-preferred-address-types=Hostname',
        '--kubelet-use-node-status-port',
        `--metric-resolution=${METRIC_RESOLUTION_SECONDS}s`,
        // It must be under the resolution (its default is 10 s); the real node's kubelet answers in milliseconds.
        '--kubelet-request-timeout=5s',
      ],
      kubeconfig,
      service: 'metrics-server',
      group: 'metrics.k8s.io',
      versions: [{ version: 'v1beta1', priority: 100 }],
    });
    return new MetricsServer(api);
  }

  get log(): string {
    return this.api.log;
  }

  stop(): Promise<void> {
    return this.api.stop();
  }
}
