/**
 * Command lines of etcd and kube-apiserver. Pure, so the exact flags are unit-tested and shown in reports.
 */
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
  /** Off by default: then compacting etcd really makes a watch from an old resourceVersion end in 410 Gone. */
  readonly watchCache?: boolean;
}

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/16';

export function apiserverArgs(c: ApiserverConfig): string[] {
  return [
    `--etcd-servers=${c.etcdEndpoint}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${c.securePort}`,
    // 1.20 still opens an unauthenticated port 8080 by default; two runs would collide on it.
    '--insecure-port=0',
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
    '--allow-privileged=true',
    `--watch-cache=${c.watchCache === true}`,
    '--profiling=false',
    '--v=1',
  ];
}
