/**
 * Where the Authorization (and Impersonate-*) headers come from: a static token, a token file
 * re-read as it rotates, basic auth, an exec credential plugin, or a legacy auth provider. Only
 * the last is delegated to `@kubernetes/client-node`, imported when such a user is selected, so
 * that the common paths never load its generated API client.
 */
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Credentials, CredentialSource } from './credential-source.js';
import { ExecCredentialPlugin } from './exec-credential.js';
import type { KubeconfigCluster, KubeconfigUser } from './kubeconfig.js';

/** Credentials that never change (none, a static token, basic auth). */
export function fixedCredentials(headers: Credentials['headers']): CredentialSource {
  const value: Credentials = { headers };
  return { credentials: () => Promise.resolve(value) };
}

/**
 * A bearer token read from a file on every call (the caller throttles the calls): projected
 * service-account tokens are rotated by the kubelet (hourly for bound tokens). As in client-go,
 * a failed re-read keeps the last token read, and a static `token` serves until the first read.
 */
export class TokenFileCredentials implements CredentialSource {
  private last: string | undefined;

  constructor(
    readonly path: string,
    /** What names this file in errors, e.g. `users[admin].user.tokenFile in /home/a/.kube/config`. */
    private readonly describe: string,
    fallbackToken?: string,
  ) {
    this.last = fallbackToken;
  }

  async credentials(): Promise<Credentials> {
    try {
      const token = (await readFile(this.path, 'utf8')).trim();
      if (token === '') throw new Error('the file is empty');
      this.last = token;
    } catch (err) {
      if (this.last === undefined)
        throw new Error(`cannot read the bearer token from ${this.path} (${this.describe}): ${(err as Error).message}`);
    }
    return { headers: { Authorization: `Bearer ${this.last ?? ''}` } };
  }
}

/** The credential source for a kubeconfig user (undefined: anonymous). Precedence as in client-go: token, basic, exec, auth-provider. */
export function credentialSourceFor(user: KubeconfigUser | undefined, cluster: KubeconfigCluster): CredentialSource {
  if (!user) return fixedCredentials({});
  const impersonation = impersonationHeaders(user);
  const at = `users[${user.name}].user in ${user.file}`;
  let source: CredentialSource;
  if (user.tokenFile !== undefined) source = new TokenFileCredentials(user.tokenFile, `${at}: tokenFile`, user.token);
  else if (user.token !== undefined) source = fixedCredentials({ Authorization: `Bearer ${user.token}` });
  else if (user.username !== undefined || user.password !== undefined) {
    source = fixedCredentials({
      Authorization: `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}`,
    });
  } else if (user.exec) source = new ExecCredentialPlugin(user.exec, cluster, `${at}: exec`);
  else if (user.authProvider) source = new ClientNodeAuthProvider(user, cluster);
  else source = fixedCredentials({});
  if (Object.keys(impersonation).length === 0) return source;
  return {
    credentials: async (afresh) => {
      const c = await source.credentials(afresh);
      return { ...c, headers: { ...c.headers, ...impersonation } };
    },
  };
}

function impersonationHeaders(user: KubeconfigUser): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  if (user.impersonate?.user !== undefined) h['Impersonate-User'] = user.impersonate.user;
  if (user.impersonate?.uid !== undefined) h['Impersonate-Uid'] = user.impersonate.uid;
  if (user.impersonate && user.impersonate.groups.length > 0) h['Impersonate-Group'] = [...user.impersonate.groups];
  return h;
}

/**
 * `auth-provider` users (oidc, gcp, azure: deprecated in client-go, still found in old
 * kubeconfigs) through client-node's KubeConfig, loaded with a dynamic import on first use.
 */
export class ClientNodeAuthProvider implements CredentialSource {
  private config: KubeConfig | undefined;

  constructor(
    private readonly user: KubeconfigUser,
    private readonly cluster: KubeconfigCluster,
  ) {}

  async credentials(afresh: boolean): Promise<Credentials> {
    if (!this.config || afresh) this.config = await this.load();
    const opts: { headers: Record<string, string> } = { headers: {} };
    try {
      await this.config.applyToHTTPSOptions(opts);
    } catch (err) {
      throw new Error(
        `users[${this.user.name}].user.auth-provider (${this.user.authProvider?.name}) in ${this.user.file}: ${(err as Error).message}`,
      );
    }
    const authorization = opts.headers.Authorization;
    return { headers: authorization !== undefined ? { Authorization: authorization } : {} };
  }

  private async load(): Promise<KubeConfig> {
    const { KubeConfig } = await importClientNode(this.user);
    const config = new KubeConfig();
    // Only the user matters here: the TLS material is ours. The providers write refreshed tokens
    // into their config object, so each load starts from a copy of the kubeconfig's.
    config.loadFromOptions({
      clusters: [{ name: this.cluster.name, server: this.cluster.server, skipTLSVerify: true }],
      users: [{ name: this.user.name, authProvider: structuredClone(this.user.authProvider) }],
      contexts: [{ name: 'selected', cluster: this.cluster.name, user: this.user.name }],
      currentContext: 'selected',
    });
    return config;
  }
}

/**
 * @kubernetes/client-node is an optional dependency: the image omits it (a pod has no auth-provider user), and
 * so may any `npm install --omit=optional`. The one user who needs it is told what to install.
 */
async function importClientNode(user: KubeconfigUser): Promise<{ KubeConfig: typeof KubeConfig }> {
  try {
    return await import('@kubernetes/client-node');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new Error(
      `users[${user.name}].user.auth-provider (${user.authProvider?.name}) in ${user.file} needs the optional package ` +
        `@kubernetes/client-node, which is not installed: run \`npm install @kubernetes/client-node@~1.4.0\` next to endpoint-operator, ` +
        `or switch the user to an exec credential plugin (kubelogin, gke-gcloud-auth-plugin) or a token`,
    );
  }
}
