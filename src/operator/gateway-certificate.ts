/**
 * The gateway's serving certificate, kept by the operator in a Secret the gateway's pods mount (kubelet
 * updates a mounted Secret in place, and the gateway reloads it: src/gateway/tls/serving-certificate.ts).
 * The same CA, leaf, Secret and rotation as the webhook's (src/webhook/certificate-secret.ts, renewal.ts),
 * with the gateway Service's names and loopback in the leaf. With `issuer: 'external'` another issuer
 * (a cert-manager `Certificate`) writes the Secret with the same keys, and the operator only reads its
 * `ca.crt` to publish it (gateway-ca-configmaps.ts).
 */
import type { Logger } from '../base/logger.js';
import type { Clock } from '../base/clock.js';
import {
  ensureCertificateSecret,
  type ServingCertificates,
  type WebhookKubeApi,
} from '../webhook/certificate-secret.js';
import { serviceDnsNames, type ServingIdentity } from '../webhook/certificates.js';
import { startRenewalLoop } from '../webhook/renewal.js';

export const GATEWAY_TLS_SECRET = 'endpoint-operator-gateway-tls';
export const GATEWAY_SERVICE = 'endpoint-operator-gateway';
/** Common Name prefix of the gateway's CA: what a client's trust store shows. */
export const GATEWAY_CA_NAME = 'endpoint-operator-gateway-ca';

/** Who writes the gateway's Secret: this operator, or another issuer (cert-manager) whose Secret the operator only reads. */
export type GatewayCertificateIssuer = 'operator' | 'external';
export const GATEWAY_CERTIFICATE_ISSUERS: readonly GatewayCertificateIssuer[] = ['operator', 'external'];

export interface GatewayTlsSettings {
  readonly issuer: GatewayCertificateIssuer;
  /** The operator's namespace, where the Secret and the gateway's Service are. */
  readonly namespace: string;
  /** Holds `tls.crt`, `tls.key`, `ca.crt` (and, issued here, `ca.key`). */
  readonly secretName: string;
  /** The gateway's Service: its in-cluster names are the leaf's. */
  readonly serviceName: string;
  readonly caValidityDays: number;
  readonly servingValidityDays: number;
}

export const DEFAULT_GATEWAY_TLS: Omit<GatewayTlsSettings, 'namespace'> = {
  issuer: 'operator',
  secretName: GATEWAY_TLS_SECRET,
  serviceName: GATEWAY_SERVICE,
  caValidityDays: 3650,
  servingValidityDays: 365,
};

/** The Service's names, and loopback (a port-forward, `npm start`'s in-process gateway). */
export function gatewayServingIdentity(serviceName: string, namespace: string): ServingIdentity {
  return {
    dnsNames: [...serviceDnsNames(serviceName, namespace), 'localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  };
}

/** The gateway's certificates, created or renewed in the Secret as needed (every replica may call it). */
export function ensureGatewayCertificate(
  client: WebhookKubeApi,
  settings: GatewayTlsSettings,
  opts: { clock?: Pick<Clock, 'now'>; log?: Logger } = {},
): Promise<ServingCertificates> {
  return ensureCertificateSecret(
    client,
    {
      namespace: settings.namespace,
      secretName: settings.secretName,
      identity: gatewayServingIdentity(settings.serviceName, settings.namespace),
      validity: { caDays: settings.caValidityDays, servingDays: settings.servingValidityDays },
      caName: GATEWAY_CA_NAME,
      component: 'gateway',
    },
    {
      ...(opts.clock === undefined ? {} : { clock: opts.clock }),
      ...(opts.log === undefined
        ? {}
        : { log: (e) => opts.log?.info({ action: e.action, reason: e.reason }, 'gateway certificates') }),
    },
  );
}

export interface ManagedGatewayCertificate {
  /** The certificates as last read or issued. */
  current(): ServingCertificates;
  /** Called after a renewal (here or by another replica) changed them. */
  onChange(listener: (certs: ServingCertificates) => void | Promise<void>): void;
}

/**
 * Issues the gateway's certificates now (so a start-up without the permission to write the Secret fails
 * loudly) and renews them before expiry until `signal` aborts. Every replica runs it, as the webhook's.
 */
export async function manageGatewayCertificate(opts: {
  readonly client: WebhookKubeApi;
  readonly settings: GatewayTlsSettings;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly clock?: Pick<Clock, 'now'>;
  readonly maxIntervalMs?: number;
}): Promise<ManagedGatewayCertificate> {
  if (opts.settings.issuer !== 'operator')
    throw new Error(`the gateway's certificate is issued by ${opts.settings.issuer}, not by the operator`);
  const log = opts.log.child({ component: 'gateway-certificate' });
  const clock = opts.clock === undefined ? {} : { clock: opts.clock };
  let current = await ensureGatewayCertificate(opts.client, opts.settings, { ...clock, log });
  const listeners: ((certs: ServingCertificates) => void | Promise<void>)[] = [];
  startRenewalLoop({
    what: 'gateway',
    ensure: () => ensureGatewayCertificate(opts.client, opts.settings, { ...clock, log }),
    current,
    selfManaged: true,
    onChange: async (next) => {
      current = next;
      log.info('gateway serving certificate renewed');
      for (const listener of listeners) await listener(next);
    },
    log,
    signal: opts.signal,
    ...clock,
    ...(opts.maxIntervalMs === undefined ? {} : { maxIntervalMs: opts.maxIntervalMs }),
  });
  return { current: () => current, onChange: (listener) => listeners.push(listener) };
}
