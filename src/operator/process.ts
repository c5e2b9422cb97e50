/**
 * One operator process: the admission/conversion webhooks, the gateway's serving certificate,
 * optionally the sign-in API, and the controllers (with leader election; with sign-in, also those
 * of the sign-in kinds, over the sign-in API's cache), started in that order and stopped in reverse.
 * Shared by `endpoint-operator run` (a real cluster) and `npm start` (dev/environment, the local
 * control plane); neither parses flags here.
 */
import type { ValidationOptions } from '../api/common/kind.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../base/logger.js';
import { startKubernetesSignIn, type RunningKubernetesSignIn } from '../signin/kube/start.js';
import type { TrustedProxies } from '../signin/trusted-proxies.js';
import type { ServerLimits } from '../http/server-limits.js';
import type { VerificationLimits } from '../signin/verification-queue.js';
import { runWebhooks, type RunningWebhooks } from '../webhook/run.js';
import type { WebhookSettings } from '../webhook/settings.js';
import { startOperator, type OperatorSettings, type RunningOperator } from './start.js';
import {
  manageGatewayCertificate,
  type GatewayTlsSettings,
  type ManagedGatewayCertificate,
} from './gateway-certificate.js';

export interface ProcessConfig {
  readonly operator: OperatorSettings;
  /** Absent: no webhook server (for example when another replica set serves them). */
  readonly webhook?: {
    readonly settings: WebhookSettings;
    readonly listen: { readonly host: string; readonly port: number };
    readonly serverLimits?: ServerLimits;
  };
  /**
   * The gateway's serving certificate: issued and rotated here (`issuer: 'operator'`) or read from another
   * issuer's Secret; either way its `ca.crt` is published to the clients' namespaces. Absent: a plain-HTTP gateway.
   */
  readonly gatewayTls?: GatewayTlsSettings;
  /** Absent: no sign-in API. */
  readonly signin?: {
    readonly namespace: string;
    readonly host: string;
    readonly port: number;
    readonly trustedProxies?: TrustedProxies;
    readonly serverLimits?: ServerLimits;
    readonly verificationLimits?: Partial<VerificationLimits>;
  };
}

export interface RunningProcess {
  readonly operator: RunningOperator;
  readonly webhooks: RunningWebhooks | undefined;
  readonly signin: RunningKubernetesSignIn | undefined;
  /** The gateway's certificates when this operator issues them (`npm start` hands them to its in-process gateway). */
  readonly gatewayCertificate: ManagedGatewayCertificate | undefined;
  /** Stops the controllers (draining and releasing the lease), the sign-in API, then the webhooks. */
  stop(): Promise<void>;
}

export async function startOperatorProcess(
  client: KubeClient,
  config: ProcessConfig,
  log: Logger,
  signal: AbortSignal,
): Promise<RunningProcess> {
  const validation: ValidationOptions = { reservedPrefixes: config.operator.reservedPrefixes ?? [] };
  // Webhooks first: they must answer before anything applies objects of our kinds, and the
  // RegistryEndpoint CRD's conversion needs them before a v1beta1 object can be read.
  const webhooks = config.webhook
    ? await runWebhooks({
        client,
        settings: config.webhook.settings,
        listen: config.webhook.listen,
        options: validation,
        log,
        signal,
        ...(config.webhook.serverLimits === undefined ? {} : { serverLimits: config.webhook.serverLimits }),
      })
    : undefined;
  let operator: RunningOperator | undefined;
  let signin: RunningKubernetesSignIn | undefined;
  let gatewayCertificate: ManagedGatewayCertificate | undefined;
  const gatewayTls = config.gatewayTls;
  try {
    if (gatewayTls?.issuer === 'operator')
      gatewayCertificate = await manageGatewayCertificate({ client, settings: gatewayTls, log, signal });
    const gatewayCaSecret = gatewayTls && { namespace: gatewayTls.namespace, name: gatewayTls.secretName };
    if (config.signin) {
      signin = await startKubernetesSignIn({
        client,
        namespace: config.signin.namespace,
        host: config.signin.host,
        port: config.signin.port,
        ...(config.signin.trustedProxies === undefined ? {} : { trustedProxies: config.signin.trustedProxies }),
        ...(config.signin.serverLimits === undefined ? {} : { serverLimits: config.signin.serverLimits }),
        ...(config.signin.verificationLimits === undefined
          ? {}
          : { verificationLimits: config.signin.verificationLimits }),
        logger: log.child({ component: 'signin' }),
        signal,
      });
    }
    operator = await startOperator({
      client,
      settings: { ...config.operator, gatewayCaSecret },
      log,
      signIn: signin?.directory,
    });
  } catch (err) {
    await operator?.stop();
    await signin?.close();
    await webhooks?.close();
    throw err;
  }
  const running = operator;
  let stopping: Promise<void> | undefined;
  return {
    operator: running,
    webhooks,
    signin,
    gatewayCertificate,
    stop: () =>
      (stopping ??= (async () => {
        await running.stop();
        await signin?.close();
        await webhooks?.close();
      })()),
  };
}
