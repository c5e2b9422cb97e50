/**
 * How to reach and authenticate to the API server: the server URL, the TLS material and a
 * credential source, from (in this order, as controller-runtime's GetConfig looks) --kubeconfig,
 * $KUBECONFIG, the in-cluster service account, ~/.kube/config.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { isIPv6 } from 'node:net';
import type { CredentialSource } from './credential-source.js';
import { credentialSourceFor, TokenFileCredentials } from './credentials.js';
import { KubeconfigError, readKubeconfigFiles, selectContext, type SelectedContext } from './kubeconfig.js';

/** Mounted into every pod that has a service account (the kubelet rotates the projected token). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface ClientTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
  /** false only with insecure-skip-tls-verify. */
  readonly rejectUnauthorized: boolean;
}

export interface ClusterConnection {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  readonly tls: ClientTls;
  readonly credentials: CredentialSource;
  /** The context's namespace, or the service account's. */
  readonly namespace?: string;
  /** kubeconfig `proxy-url`: an HTTP(S) proxy every connection tunnels through with CONNECT. */
  readonly proxyUrl?: string;
  /** Where this came from, for logs: `in-cluster` or the kubeconfig files. */
  readonly origin: string;
}

export interface LoadOptions {
  /** An explicit kubeconfig file (--kubeconfig): must exist. */
  readonly path?: string;
  /** A context other than current-context. */
  readonly context?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly serviceAccountDir?: string;
  readonly homeDir?: string;
}

export function loadClusterConnection(options: LoadOptions = {}): ClusterConnection {
  const env = options.env ?? process.env;
  const kubeconfigEnv = env.KUBECONFIG ?? '';
  // The CLI fills --kubeconfig from $KUBECONFIG: a value equal to it keeps $KUBECONFIG's meaning,
  // a list of files merged by client-go's rules (for one file both readings are the same).
  if (options.path !== undefined && options.path !== '' && options.path !== kubeconfigEnv) {
    return connectionFromKubeconfig(
      selectContext(readKubeconfigFiles([options.path], { mustExist: true }), options.context),
    );
  }
  if (kubeconfigEnv !== '')
    return connectionFromKubeconfig(
      selectContext(readKubeconfigFiles(kubeconfigEnv.split(delimiter), { mustExist: false }), options.context),
    );
  const saDir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const inCluster = env.KUBERNETES_SERVICE_HOST !== undefined && env.KUBERNETES_SERVICE_HOST !== '';
  if (inCluster && existsSync(join(saDir, 'token'))) return inClusterConnection(env, saDir);
  const home = join(options.homeDir ?? env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home))
    return connectionFromKubeconfig(selectContext(readKubeconfigFiles([home], { mustExist: true }), options.context));
  throw new KubeconfigError(
    'no cluster configuration: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account' +
      (inCluster
        ? ` (KUBERNETES_SERVICE_HOST is set but ${join(saDir, 'token')} is missing: is automountServiceAccountToken off?)`
        : '') +
      `, or create ${home}`,
  );
}

/** client-go's rest.InClusterConfig: https to KUBERNETES_SERVICE_HOST:PORT, the service account's CA, token and namespace. */
export function inClusterConnection(env: NodeJS.ProcessEnv, saDir = SERVICE_ACCOUNT_DIR): ClusterConnection {
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '')
    throw new KubeconfigError('in-cluster configuration needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT');
  const tokenFile = join(saDir, 'token');
  // Read once now so that a pod without a usable token fails at start, not on its first request.
  const token = readText(tokenFile, 'the service account token').trim();
  if (token === '') throw new KubeconfigError(`${tokenFile}: the service account token is empty`);
  const caFile = join(saDir, 'ca.crt');
  const namespaceFile = join(saDir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readText(namespaceFile, 'the service account namespace').trim() : '';
  return {
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    // client-go falls back to the system roots when ca.crt is absent; so do we.
    tls: {
      ...(existsSync(caFile) ? { ca: readBytes(caFile, 'the service account CA') } : {}),
      rejectUnauthorized: true,
    },
    credentials: new TokenFileCredentials(tokenFile, 'the in-cluster service account token', token),
    ...(namespace !== '' ? { namespace } : {}),
    origin: 'in-cluster',
  };
}

/** The connection for a selected kubeconfig context; files named by the kubeconfig are read now. */
export function connectionFromKubeconfig(selected: SelectedContext): ClusterConnection {
  const { cluster, user, context } = selected;
  const clusterAt = `clusters[${cluster.name}].cluster in ${cluster.file}`;
  const userAt = user ? `users[${user.name}].user in ${user.file}` : '';
  const ca =
    cluster.certificateAuthorityData ??
    (cluster.certificateAuthority !== undefined
      ? readBytes(cluster.certificateAuthority, `${clusterAt}: certificate-authority`)
      : undefined);
  const cert =
    user?.clientCertificateData ??
    (user?.clientCertificate !== undefined
      ? readBytes(user.clientCertificate, `${userAt}: client-certificate`)
      : undefined);
  const key =
    user?.clientKeyData ??
    (user?.clientKey !== undefined ? readBytes(user.clientKey, `${userAt}: client-key`) : undefined);
  return {
    server: cluster.server,
    tls: {
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined ? { cert } : {}),
      ...(key !== undefined ? { key } : {}),
      ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
      rejectUnauthorized: !cluster.insecureSkipTlsVerify,
    },
    credentials: credentialSourceFor(user, cluster),
    ...(context.namespace !== undefined ? { namespace: context.namespace } : {}),
    ...(cluster.proxyUrl !== undefined ? { proxyUrl: cluster.proxyUrl } : {}),
    origin: `context ${context.name} of ${[...new Set([context.file, cluster.file, user?.file ?? context.file])].join(', ')}`,
  };
}

function readBytes(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new KubeconfigError(`cannot read ${what} (${path}): ${(err as Error).message}`);
  }
}

function readText(path: string, what: string): string {
  return readBytes(path, what).toString('utf8');
}
