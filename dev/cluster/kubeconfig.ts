import { dump } from 'js-yaml';

export interface KubeconfigInput {
  readonly server: string;
  readonly token: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  readonly caPem: string;
  readonly name?: string;
  readonly user?: string;
}

/**
 * A kubeconfig for one cluster, one bearer-token user and one context, current. The CA is embedded
 * (certificate-authority-data) so the file stays valid when copied away from the run directory.
 */
export function renderKubeconfig(k: KubeconfigInput): string {
  const name = k.name ?? 'endpoint-operator-dev';
  const user = k.user ?? 'admin';
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name, cluster: { server: k.server, 'certificate-authority-data': Buffer.from(k.caPem).toString('base64') } },
    ],
    users: [{ name: user, user: { token: k.token } }],
    contexts: [{ name, context: { cluster: name, user, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
