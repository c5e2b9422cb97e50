import type { KubeClient } from '../kube/kube-client.js';
import { ApiError } from '../kube/api-error.js';
import type { KubeObject, ResourceRef } from '../api/common/kube-object.js';
import {
  issueCertificates,
  planCertificates,
  servingIdentity,
  WEBHOOK_CA_NAME,
  type CertificateBundle,
  type CertificatePlan,
  type ServingIdentity,
  type Validity,
} from './certificates.js';
import type { WebhookSettings } from './settings.js';
import { realClock, type Clock } from '../base/clock.js';

/** What the webhook server and the configurations need: the serving pair and the CA(s) to trust. */
export interface ServingCertificates {
  readonly cert: string;
  readonly key: string;
  /** PEM; empty under cert-manager when the Secret has no `ca.crt` (its injector handles caBundle). */
  readonly caBundle: string;
}

/** The calls certificate and configuration management make (a KubeClient, or a recording fake in unit tests). */
export type WebhookKubeApi = Pick<KubeClient, 'get' | 'create' | 'replace' | 'patch'>;

export const SECRETS: ResourceRef = { group: '', version: 'v1', plural: 'secrets', namespaced: true };

export interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

const MAX_ATTEMPTS = 5;

/** A key of a Secret's data, decoded; undefined when absent. */
export function secretValue(secret: SecretObject, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

/** The stored bundle, or undefined when any part is missing (then everything is issued again). */
export function bundleFromSecret(secret: SecretObject): CertificateBundle | undefined {
  const caCert = secretValue(secret, 'ca.crt');
  const caKey = secretValue(secret, 'ca.key');
  const cert = secretValue(secret, 'tls.crt');
  const key = secretValue(secret, 'tls.key');
  if (!caCert || !caKey || !cert || !key) return undefined;
  // ca.crt holds the trust bundle (current CA first, then the previous one during a rotation).
  const current = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/.exec(caCert)?.[0] ?? caCert;
  return { caCert: current, caKey, cert, key, caBundle: caCert };
}

function secretData(bundle: CertificateBundle): Record<string, string> {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return {
    'ca.crt': b64(bundle.caBundle),
    'ca.key': b64(bundle.caKey),
    'tls.crt': b64(bundle.cert),
    'tls.key': b64(bundle.key),
  };
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}

export interface EnsureCertificatesOptions {
  /** What "now" is when judging and issuing certificates; default: the wall clock. */
  readonly clock?: Pick<Clock, 'now'>;
  readonly log?: (event: { action: CertificatePlan['action'] | 'adopted'; reason?: string }) => void;
}

/** A Secret of self-managed certificates: where it lives, what its leaf must cover, how long things last. */
export interface CertificateSecretTarget {
  readonly namespace: string;
  readonly secretName: string;
  readonly identity: ServingIdentity;
  readonly validity: Validity;
  /** Common Name prefix of a new CA (certificates.ts WEBHOOK_CA_NAME for the webhook). */
  readonly caName: string;
  /** `app.kubernetes.io/component` label of the Secret: who it serves. */
  readonly component: string;
}

/**
 * Returns valid serving certificates, creating or renewing them in the Secret as needed. Every
 * replica calls this at start: the first one to create the Secret wins (409 AlreadyExists → read
 * back and reuse), a renewal is an update guarded by resourceVersion (409 Conflict → another
 * replica renewed first: read back and reuse its certificates). The webhook's and the gateway's
 * Secrets are both kept by it.
 */
export async function ensureCertificateSecret(
  client: WebhookKubeApi,
  target: CertificateSecretTarget,
  opts: EnsureCertificatesOptions = {},
): Promise<ServingCertificates> {
  const clock = opts.clock ?? realClock;
  const { namespace: ns, secretName, identity, validity } = target;
  for (let attempt = 1; ; attempt++) {
    const secret = await client.get<SecretObject>(SECRETS, ns, secretName);
    const existing = secret ? bundleFromSecret(secret) : undefined;
    const at = new Date(clock.now());
    const plan = await planCertificates(existing, identity, at);
    if (plan.action === 'reuse' && existing) {
      opts.log?.({ action: attempt === 1 ? 'reuse' : 'adopted' });
      return { cert: existing.cert, key: existing.key, caBundle: existing.caBundle };
    }
    const bundle = await issueCertificates(plan, existing, identity, at, validity, target.caName);
    opts.log?.({ action: plan.action, ...('reason' in plan ? { reason: plan.reason } : {}) });
    const body: SecretObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secretName,
        namespace: ns,
        labels: { 'app.kubernetes.io/name': 'endpoint-operator', 'app.kubernetes.io/component': target.component },
      },
      type: 'kubernetes.io/tls',
      data: secretData(bundle),
    };
    try {
      // A Secret's type is immutable: keep whatever type a pre-existing Secret has.
      if (secret)
        await client.replace(SECRETS, ns, secretName, {
          ...body,
          type: secret.type ?? body.type,
          metadata: { ...secret.metadata, ...body.metadata, resourceVersion: secret.metadata.resourceVersion },
        });
      else await client.create(SECRETS, ns, body);
      return { cert: bundle.cert, key: bundle.key, caBundle: bundle.caBundle };
    } catch (err) {
      if (!isConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
      // Another replica wrote first: loop to read its certificates back and reuse them.
    }
  }
}

/** The webhook's certificates: from cert-manager's Secret, or self-managed by ensureCertificateSecret. */
export async function ensureWebhookCertificates(
  client: WebhookKubeApi,
  settings: WebhookSettings,
  opts: EnsureCertificatesOptions = {},
): Promise<ServingCertificates> {
  const ns = settings.namespace;
  if (settings.certificates.mode === 'cert-manager') {
    const secret = await client.get<SecretObject>(SECRETS, ns, settings.secretName);
    const cert = secret && secretValue(secret, 'tls.crt');
    const key = secret && secretValue(secret, 'tls.key');
    if (!cert || !key) {
      throw new Error(
        `certificates come from cert-manager, but Secret ${ns}/${settings.secretName} has no tls.crt/tls.key yet: is Certificate ${ns}/${settings.certificates.certificate} issued?`,
      );
    }
    return { cert, key, caBundle: (secret && secretValue(secret, 'ca.crt')) ?? '' };
  }
  return ensureCertificateSecret(
    client,
    {
      namespace: ns,
      secretName: settings.secretName,
      identity: servingIdentity(
        settings.serviceName,
        ns,
        settings.endpoint.mode === 'local' ? { host: settings.endpoint.host } : undefined,
      ),
      validity: { caDays: settings.caValidityDays, servingDays: settings.servingValidityDays },
      caName: WEBHOOK_CA_NAME,
      component: 'webhook',
    },
    opts,
  );
}
