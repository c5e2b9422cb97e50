import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';

/**
 * Where the API server reaches the webhooks. `local`: the local control plane calls the operator
 * on a loopback URL (no Service exists); `in-cluster`: through the operator's Service.
 */
export type WebhookEndpoint =
  | { readonly mode: 'local'; readonly host: string; readonly port: number }
  | { readonly mode: 'in-cluster'; readonly port: number };

/** How the serving certificate is obtained. */
export type CertificateSource =
  /** The operator creates a CA and a serving certificate and keeps them in a Secret. */
  | { readonly mode: 'self-managed' }
  /**
   * cert-manager issues the Secret (a `Certificate` named `certificate` in the operator's namespace)
   * and its CA injector fills every caBundle from the `cert-manager.io/inject-ca-from` annotation.
   */
  | { readonly mode: 'cert-manager'; readonly certificate: string };

export interface WebhookSettings {
  /** The operator's own namespace: never intercepted, and where the certificate Secret lives. */
  readonly namespace: string;
  /** Service in front of the webhook server (in-cluster mode; also a SAN of the serving certificate). */
  readonly serviceName: string;
  readonly endpoint: WebhookEndpoint;
  readonly certificates: CertificateSource;
  /** Secret holding `ca.crt`, `ca.key`, `tls.crt`, `tls.key`. */
  readonly secretName: string;
  /** Name of the ValidatingWebhookConfiguration and of the MutatingWebhookConfiguration. */
  readonly configurationName: string;
  /** Validity of the self-managed CA and serving certificate. */
  readonly caValidityDays: number;
  readonly servingValidityDays: number;
  /** Annotation prefixes ignored by validation (see ValidationOptions.reservedPrefixes). */
  readonly reservedPrefixes: readonly string[];
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  namespace: 'endpoint-operator-system',
  serviceName: 'endpoint-operator-webhook',
  endpoint: { mode: 'in-cluster', port: 443 },
  certificates: { mode: 'self-managed' },
  secretName: 'endpoint-operator-webhook-tls',
  configurationName: 'endpoint-operator',
  caValidityDays: 3650,
  servingValidityDays: 365,
  reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
};

/** Settings for the local control plane: the API server calls `https://<host>:<port>/...` directly. */
export function localWebhookSettings(
  port: number,
  overrides: Partial<WebhookSettings> = {},
  host = '127.0.0.1',
): WebhookSettings {
  return { ...DEFAULT_WEBHOOK_SETTINGS, ...overrides, endpoint: { mode: 'local', host, port } };
}

export const VALIDATE_PATH = '/validate';
export const CONVERT_PATH = '/convert';
export const MUTATE_PATH = '/mutate';
