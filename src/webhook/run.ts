import type { Logger } from 'pino';
import type { KindDefinition, ValidationOptions } from '../api/common/kind.js';
import { ensureWebhookCertificates, type ServingCertificates, type WebhookKubeApi } from './certificate-secret.js';
import { installWebhooks, type InstallReport } from './install.js';
import { startCertificateRenewal } from './renewal.js';
import type { ServerLimits } from '../http/server-limits.js';
import { startWebhookServer, type WebhookServer } from './server.js';
import type { WebhookSettings } from './settings.js';

export interface RunWebhooksOptions {
  readonly client: WebhookKubeApi;
  /** In local mode an `endpoint.port` of 0 means "the port the server was given" (listen.port 0 = any free port). */
  readonly settings: WebhookSettings;
  /** Where the HTTPS server listens (in-cluster: the container port the Service targets, e.g. 0.0.0.0:9443). */
  readonly listen: { readonly host: string; readonly port: number };
  readonly options: ValidationOptions;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly kinds?: readonly KindDefinition[];
  /** Timeouts and connection cap of the HTTPS port; default WEBHOOK_SERVER_LIMITS. */
  readonly serverLimits?: ServerLimits;
}

export interface RunningWebhooks {
  readonly server: WebhookServer;
  /** The settings as installed (local mode: with the real port). */
  readonly settings: WebhookSettings;
  readonly certificates: ServingCertificates;
  readonly install: InstallReport;
  close(): Promise<void>;
}

/**
 * Everything `endpoint-operator run` needs for its webhooks, in order: certificates (shared by
 * every replica through the Secret), the HTTPS server, the configurations with the caBundle, and
 * renewal in the background until `signal` aborts. Every replica may run it: writes happen only
 * when something differs.
 */
export async function runWebhooks(opts: RunWebhooksOptions): Promise<RunningWebhooks> {
  const log = opts.log.child({ component: 'webhook' });
  const certificates = await ensureWebhookCertificates(opts.client, opts.settings, {
    log: (e) => log.info({ action: e.action, reason: e.reason }, 'webhook certificates'),
  });
  const server = await startWebhookServer({
    port: opts.listen.port,
    host: opts.listen.host,
    tls: { cert: certificates.cert, key: certificates.key },
    options: opts.options,
    log,
    ...(opts.kinds === undefined ? {} : { kinds: opts.kinds }),
    ...(opts.serverLimits === undefined ? {} : { serverLimits: opts.serverLimits }),
  });
  try {
    const endpoint = opts.settings.endpoint;
    const settings: WebhookSettings =
      endpoint.mode === 'local' && endpoint.port === 0
        ? { ...opts.settings, endpoint: { ...endpoint, port: server.port } }
        : opts.settings;
    const install = await installWebhooks(
      opts.client,
      settings,
      certificates.caBundle === '' ? undefined : certificates.caBundle,
      opts.kinds,
    );
    log.info(
      {
        configuration: install.configuration,
        mutatingConfiguration: install.mutatingConfiguration,
        crds: install.crds,
      },
      'webhook configurations installed',
    );
    startCertificateRenewal({
      client: opts.client,
      settings,
      server,
      current: certificates,
      log,
      signal: opts.signal,
      ...(opts.kinds === undefined ? {} : { kinds: opts.kinds }),
    });
    return { server, settings, certificates, install, close: () => server.close() };
  } catch (err) {
    await server.close();
    throw err;
  }
}
