/**
 * Command lines of the local cluster's components. Pure, so the exact flags are unit-tested and shown in reports.
 */
import { FRONT_PROXY_CLIENT } from './credentials.js';
import { SERVICE_CLUSTER_IP_RANGE } from './network.js';

export interface EtcdConfig {
  readonly dataDir: string;
  readonly clientPort: number;
  readonly peerPort: number;
}

export function etcdArgs(c: EtcdConfig): string[] {
  const client = `http://127.0.0.1:${c.clientPort}`;
  const peer = `http://127.0.0.1:${c.peerPort}`;
  return [
    '--name=endpoint-operator-dev',
    `--data-dir=${c.dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    // The peer port is bound even for a one-member cluster; a free one keeps two runs apart.
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=endpoint-operator-dev=${peer}`,
    '--initial-cluster-state=new',
    // A test cluster's data is thrown away: no fsync per write (etcd's own test clusters do the same).
    '--unsafe-no-fsync',
    '--log-level=warn',
    '--logger=zap',
  ];
}

export interface ApiserverConfig {
  readonly etcdEndpoint: string;
  readonly securePort: number;
  readonly certDir: string;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly tokenAuthFile: string;
  readonly serviceAccountPublicKeyFile: string;
  readonly serviceAccountSigningKeyFile: string;
  readonly requestHeaderCaFile: string;
  readonly proxyClientCertFile: string;
  readonly proxyClientKeyFile: string;
  /** Given with a real node: the client certificate the apiserver shows the kubelet. */
  readonly kubeletClientCertFile?: string;
  readonly kubeletClientKeyFile?: string;
  /** Off by default: then compacting etcd really makes a watch from an old resourceVersion end in 410 Gone. */
  readonly watchCache?: boolean;
  /**
   * With a real node: webhooks and APIServices backed by its pods are called at their endpoints, since this
   * namespace routes the pod range but cluster IPs are kube-proxy's rules inside the node's namespace. Off
   * otherwise: an APIService of an ExternalName Service (a test's adapter on loopback) has no endpoints.
   */
  readonly routeToEndpoints?: boolean;
}

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export function apiserverArgs(c: ApiserverConfig): string[] {
  return [
    `--etcd-servers=${c.etcdEndpoint}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${c.securePort}`,
    // The `kubernetes` Service's endpoints would be the loopback advertise address, which EndpointSlices refuse.
    '--endpoint-reconciler-type=none',
    `--cert-dir=${c.certDir}`,
    `--tls-cert-file=${c.tlsCertFile}`,
    `--tls-private-key-file=${c.tlsKeyFile}`,
    `--token-auth-file=${c.tokenAuthFile}`,
    '--authorization-mode=RBAC',
    `--service-account-key-file=${c.serviceAccountPublicKeyFile}`,
    `--service-account-signing-key-file=${c.serviceAccountSigningKeyFile}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--api-audiences=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
    // The aggregation layer, as kubeadm configures it: APIServices such as custom.metrics.k8s.io are proxied with
    // the front proxy's client certificate and the caller in X-Remote-* headers.
    `--requestheader-client-ca-file=${c.requestHeaderCaFile}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT}`,
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${c.proxyClientCertFile}`,
    `--proxy-client-key-file=${c.proxyClientKeyFile}`,
    ...(c.kubeletClientCertFile !== undefined && c.kubeletClientKeyFile !== undefined
      ? [`--kubelet-client-certificate=${c.kubeletClientCertFile}`, `--kubelet-client-key=${c.kubeletClientKeyFile}`]
      : []),
    ...(c.routeToEndpoints === true ? ['--enable-aggregator-routing=true'] : []),
    '--allow-privileged=true',
    `--watch-cache=${c.watchCache === true}`,
    '--profiling=false',
    '--v=1',
  ];
}

export interface ControllerManagerConfig {
  readonly kubeconfig: string;
  readonly securePort: number;
  readonly caFile: string;
  readonly serviceAccountSigningKeyFile: string;
  /** Lift the client's rate limit (StartControlPlaneOptions.unthrottledControllerManager). */
  readonly unthrottled?: boolean;
}

export function controllerManagerArgs(c: ControllerManagerConfig): string[] {
  return [
    `--kubeconfig=${c.kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${c.securePort}`,
    // One cluster, one instance: no lease to wait for at start.
    '--leader-elect=false',
    // Each controller acts as its own service account with the bootstrap roles, as kubeadm runs it: RBAC
    // gaps a real cluster has show up here too.
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${c.serviceAccountSigningKeyFile}`,
    `--root-ca-file=${c.caFile}`,
    // Nodes carry their pod ranges from creation (nodes.ts); nothing to allocate.
    '--allocate-node-cidrs=false',
    '--cluster-name=endpoint-operator-dev',
    // kwokctl's --disable-qps-limits: with the credentials above, each of some 40 controllers gets its
    // ServiceAccount and a token through one client limited to 20 requests/s (burst 30), so a fresh cluster's
    // deployment controller starts about 5 s after /healthz answers.
    ...(c.unthrottled === true ? ['--kube-api-qps=5000', '--kube-api-burst=10000'] : []),
    '--profiling=false',
    '--v=1',
  ];
}

export interface SchedulerConfig {
  readonly kubeconfig: string;
  readonly securePort: number;
}

export function schedulerArgs(c: SchedulerConfig): string[] {
  return [
    `--kubeconfig=${c.kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${c.securePort}`,
    '--leader-elect=false',
    '--profiling=false',
    '--v=1',
  ];
}

export interface KwokConfig {
  readonly kubeconfig: string;
  readonly stagesFile: string;
  /** The label every simulated Node carries (nodes.ts): kwok manages those and no other. */
  readonly nodeLabel: string;
  readonly serverPort: number;
}

export function kwokArgs(c: KwokConfig): string[] {
  return [
    `--kubeconfig=${c.kubeconfig}`,
    `--config=${c.stagesFile}`,
    `--manage-nodes-with-label-selector=${c.nodeLabel}`,
    // Leases keep the node lifecycle controller from tainting the Nodes unreachable.
    '--node-lease-duration-seconds=40',
    `--server-address=127.0.0.1:${c.serverPort}`,
  ];
}
