import type { Logger } from 'pino';
import type { KindDefinition } from '../api/common/kind.js';
import { ensureWebhookCertificates, type ServingCertificates, type WebhookKubeApi } from './certificate-secret.js';
import { nextRenewalCheck } from './certificates.js';
import { installWebhooks } from './install.js';
import type { WebhookServer } from './server.js';
import type { WebhookSettings } from './settings.js';
import { realClock, type Clock } from '../base/clock.js';

export interface RenewalLoopOptions {
  /** What the certificates serve, for the log lines (`webhook`, `gateway`). */
  readonly what: string;
  /** Reads the certificates again, renewing them in their Secret when due (ensureCertificateSecret and its callers). */
  readonly ensure: () => Promise<ServingCertificates>;
  /** The certificates in use now. */
  readonly current: ServingCertificates;
  /** Whether `ensure` issues them (then a check is due at their renewal point); else someone else does, checked every `maxIntervalMs`. */
  readonly selfManaged: boolean;
  /** Puts different certificates into use; when it throws, the next check (in a minute) tries again. */
  readonly onChange: (next: ServingCertificates, previous: ServingCertificates) => Promise<void> | void;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /**
   * Upper bound between checks: another replica may renew first, and this one must pick the new
   * certificate up (and what trusts the CA must not drift) well before the old one expires.
   */
  readonly maxIntervalMs?: number;
  /** What "now" is when judging the certificate; the timer is the process's own (unref'd: a pending check never holds the process open). */
  readonly clock?: Pick<Clock, 'now'>;
}

const HOUR_MS = 3_600_000;

/**
 * Keeps certificates fresh for as long as `signal` is not aborted: at their renewal point (or every
 * `maxIntervalMs`) it re-runs `ensure` and hands changed certificates to `onChange`. Failures are
 * logged and retried in a minute.
 */
export function startRenewalLoop(opts: RenewalLoopOptions): void {
  const clock = opts.clock ?? realClock;
  const maxInterval = opts.maxIntervalMs ?? HOUR_MS;
  let current = opts.current;
  let timer: NodeJS.Timeout | undefined;

  const delayFor = (certs: ServingCertificates): number => {
    if (!opts.selfManaged) return maxInterval;
    try {
      // The bundle's first certificate is the current CA (see issueCertificates).
      const due =
        nextRenewalCheck({
          caCert: certs.caBundle,
          caKey: '',
          cert: certs.cert,
          key: certs.key,
          caBundle: certs.caBundle,
        }).getTime() - clock.now();
      return Math.max(1_000, Math.min(maxInterval, due));
    } catch {
      return maxInterval;
    }
  };

  const schedule = (ms: number): void => {
    if (opts.signal.aborted) return;
    timer = setTimeout(() => void check(), ms);
    timer.unref();
  };

  const check = async (): Promise<void> => {
    try {
      const next = await opts.ensure();
      if (next.cert !== current.cert || next.key !== current.key || next.caBundle !== current.caBundle)
        await opts.onChange(next, current);
      current = next;
      schedule(delayFor(current));
    } catch (err) {
      opts.log.error({ err: (err as Error).message }, `${opts.what} certificate renewal failed; retrying in a minute`);
      schedule(60_000);
    }
  };

  opts.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  schedule(delayFor(current));
}

export interface CertificateRenewalOptions {
  readonly client: WebhookKubeApi;
  readonly settings: WebhookSettings;
  readonly server: WebhookServer;
  readonly current: ServingCertificates;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly kinds?: readonly KindDefinition[];
  /** See RenewalLoopOptions.maxIntervalMs (the API server's caBundle must not drift either). */
  readonly maxIntervalMs?: number;
  readonly clock?: Pick<Clock, 'now'>;
}

/**
 * Keeps the webhook's serving certificate fresh: swaps the TLS context in place when the certificate
 * changed, and re-injects the caBundle when the CA did.
 */
export function startCertificateRenewal(opts: CertificateRenewalOptions): void {
  const clock = opts.clock ?? realClock;
  startRenewalLoop({
    what: 'webhook',
    ensure: () => ensureWebhookCertificates(opts.client, opts.settings, { clock }),
    current: opts.current,
    selfManaged: opts.settings.certificates.mode !== 'cert-manager',
    onChange: async (next, previous) => {
      if (next.cert !== previous.cert || next.key !== previous.key) {
        opts.server.setTls({ cert: next.cert, key: next.key });
        opts.log.info('webhook serving certificate renewed');
      }
      if (next.caBundle !== previous.caBundle)
        await installWebhooks(opts.client, opts.settings, next.caBundle || undefined, opts.kinds);
    },
    log: opts.log,
    signal: opts.signal,
    clock,
    ...(opts.maxIntervalMs === undefined ? {} : { maxIntervalMs: opts.maxIntervalMs }),
  });
}
