import type { Logger } from 'pino';
import type { KindDefinition } from '../api/common/kind.js';
import { ensureWebhookCertificates, type ServingCertificates, type WebhookKubeApi } from './certificate-secret.js';
import { nextRenewalCheck } from './certificates.js';
import { installWebhooks } from './install.js';
import type { WebhookServer } from './server.js';
import type { WebhookSettings } from './settings.js';
import { realClock, type Clock } from '../runtime/clock.js';

export interface CertificateRenewalOptions {
  readonly client: WebhookKubeApi;
  readonly settings: WebhookSettings;
  readonly server: WebhookServer;
  readonly current: ServingCertificates;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly kinds?: readonly KindDefinition[];
  /**
   * Upper bound between checks: another replica may renew first, and this one must pick the new
   * certificate up (and the API server's caBundle must not drift) well before the old one expires.
   */
  readonly maxIntervalMs?: number;
  /** What "now" is when judging the certificate; the timer is the process's own (unref'd: a pending check never holds the process open). */
  readonly clock?: Pick<Clock, 'now'>;
}

const HOUR_MS = 3_600_000;

/**
 * Keeps the serving certificate fresh for a running server: at the renewal point (or every
 * `maxIntervalMs`) it re-runs ensureWebhookCertificates, swaps the TLS context in place when the
 * certificate changed, and re-injects the caBundle. Failures are logged and retried in a minute.
 */
export function startCertificateRenewal(opts: CertificateRenewalOptions): void {
  const clock = opts.clock ?? realClock;
  const maxInterval = opts.maxIntervalMs ?? HOUR_MS;
  let current = opts.current;
  let timer: NodeJS.Timeout | undefined;

  const delayFor = (certs: ServingCertificates): number => {
    if (opts.settings.certificates.mode === 'cert-manager') return maxInterval;
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
      const next = await ensureWebhookCertificates(opts.client, opts.settings, { clock });
      if (next.cert !== current.cert || next.key !== current.key) {
        opts.server.setTls({ cert: next.cert, key: next.key });
        opts.log.info('webhook serving certificate renewed');
      }
      if (next.caBundle !== current.caBundle)
        await installWebhooks(opts.client, opts.settings, next.caBundle || undefined, opts.kinds);
      current = next;
      schedule(delayFor(current));
    } catch (err) {
      opts.log.error({ err: (err as Error).message }, 'webhook certificate renewal failed; retrying in a minute');
      schedule(60_000);
    }
  };

  opts.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  schedule(delayFor(current));
}
