/**
 * What a kube client sends to authenticate, and where it comes from: the one interface the credential
 * kinds (credentials.ts) and the exec plugin (exec-credential.ts) both implement, apart so neither imports the other.
 */
export interface Credentials {
  /** Authorization and Impersonate-* headers. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** A client certificate handed out by an exec plugin; it replaces the kubeconfig's. */
  readonly clientCertificate?: { readonly cert: Buffer; readonly key: Buffer };
  /** Epoch milliseconds after which these must not be sent (an exec plugin's expirationTimestamp). */
  readonly expiresAt?: number;
}

export interface CredentialSource {
  /** The credentials to send now; `afresh` after a 401, so that cached tokens are dropped. */
  credentials(afresh: boolean): Promise<Credentials>;
}
