import { hostname } from 'node:os';
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { DEFAULT_PROJECT_TEMPLATE, gatewayUrlProblem, projectTemplateProblem } from '../api/prediction/v1/names.js';
import { defaultGatewayUrl } from '../deploy/values.js';
import { KubeClient } from '../kube/kube-client.js';
import { createLogger } from '../base/logger.js';
import { collectProcessMetrics } from '../base/metrics.js';
import { Shutdown } from '../runtime/shutdown.js';
import { startTelemetry } from '../runtime/telemetry.js';
import { startOperatorProcess, type ProcessConfig } from '../operator/process.js';
import {
  DEFAULT_GATEWAY_TLS,
  GATEWAY_CERTIFICATE_ISSUERS,
  type GatewayCertificateIssuer,
  type GatewayTlsSettings,
} from '../operator/gateway-certificate.js';
import { DEFAULT_WEBHOOK_SETTINGS, localWebhookSettings, type WebhookSettings } from '../webhook/settings.js';
import {
  UsageError,
  bool,
  list,
  num,
  parseFlags,
  renderFlags,
  serverLimitsOf,
  str,
  wholePositive,
  type FlagSpec,
  type FlagValues,
} from './flags.js';
import { parseTrustedProxies, type TrustedProxies } from '../signin/trusted-proxies.js';
import { AUTH_MODES, type AuthMode } from '../gateway/auth/settings.js';
import { SIGNIN_SERVER_LIMITS, WEBHOOK_SERVER_LIMITS } from '../http/server-limits.js';
import { DEFAULT_VERIFICATION_LIMITS, type VerificationLimits } from '../signin/verification-queue.js';
import { MODEL_NETWORK_POLICY_FLAGS, modelNetworkPolicyConfig } from './model-network-policy-flags.js';

const podNamespace = process.env.POD_NAMESPACE;

export const RUN_FLAGS: readonly FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    env: 'KUBECONFIG',
    placeholder: 'PATH',
    help: 'kubeconfig file; without it: in-cluster config, then ~/.kube/config',
  },
  {
    name: 'project',
    type: 'string',
    env: 'EO_PROJECT',
    default: DEFAULT_PROJECT_TEMPLATE,
    placeholder: 'TEMPLATE',
    help: 'project in PredictionEndpoint status.name (projects/{project}/...); {namespace} is replaced and must appear, so names are unique',
  },
  {
    name: 'location',
    type: 'string',
    env: 'EO_LOCATION',
    default: 'us-central1',
    help: 'location in PredictionEndpoint status.name',
  },
  {
    name: 'gateway-url',
    type: 'string',
    env: 'EO_GATEWAY_URL',
    placeholder: 'URL',
    help: 'base URL of the gateway, published in PredictionEndpoint status.url (default https://endpoint-operator-gateway.{operator namespace}.svc, http:// with --gateway-tls-issuer=none)',
  },
  {
    name: 'gateway-tls-issuer',
    type: 'string',
    env: 'EO_GATEWAY_TLS_ISSUER',
    default: DEFAULT_GATEWAY_TLS.issuer,
    placeholder: 'WHO',
    help: "operator: the operator issues the gateway's serving certificate into --gateway-tls-secret and rotates it before expiry; external: another issuer (a cert-manager Certificate) writes that Secret (tls.crt, tls.key, ca.crt); none: the gateway serves plain HTTP. Unless none, the Secret's ca.crt is published as ConfigMap endpoint-operator-gateway-ca.crt in every namespace with a PredictionEndpoint or RegistryService",
  },
  {
    name: 'gateway-tls-secret',
    type: 'string',
    env: 'EO_GATEWAY_TLS_SECRET',
    default: DEFAULT_GATEWAY_TLS.secretName,
    placeholder: 'NAME',
    help: "Secret in the operator namespace holding the gateway's serving certificate (kubernetes.io/tls with ca.crt), mounted by the gateway's pods",
  },
  {
    name: 'gateway-service',
    type: 'string',
    env: 'EO_GATEWAY_SERVICE',
    default: DEFAULT_GATEWAY_TLS.serviceName,
    placeholder: 'NAME',
    help: "the gateway's Service in the operator namespace: its names are the certificate's (with localhost, 127.0.0.1, ::1)",
  },
  {
    name: 'namespaces',
    type: 'list',
    env: 'EO_NAMESPACES',
    default: [],
    placeholder: 'NS[,NS]',
    help: 'namespaces to watch; empty = all namespaces',
  },
  {
    name: 'machine-catalogue',
    type: 'string',
    env: 'EO_MACHINE_CATALOGUE',
    placeholder: 'CONFIGMAP',
    help: "ConfigMap in the operator's namespace holding the machine-type catalogue of DeployedModel containerSpec (key machine-types.json), followed live: edits need no restart; default: the built-in one",
  },
  ...MODEL_NETWORK_POLICY_FLAGS,
  {
    name: 'workers',
    type: 'number',
    env: 'EO_WORKERS',
    default: 4,
    placeholder: 'N',
    help: 'concurrent reconciles per controller',
  },
  {
    name: 'reserved-prefix',
    type: 'list',
    env: 'EO_RESERVED_PREFIXES',
    default: DEFAULT_RESERVED_PREFIXES,
    placeholder: 'DOMAIN',
    help: 'annotation prefixes that are kept but ignored (repeatable; subdomains included)',
  },
  {
    name: 'operator-namespace',
    type: 'string',
    env: 'POD_NAMESPACE',
    default: podNamespace ?? 'endpoint-operator-system',
    placeholder: 'NS',
    help: "the operator's own namespace (lease, webhook Secret; never intercepted by the webhook)",
  },
  {
    name: 'leader-elect',
    type: 'boolean',
    env: 'EO_LEADER_ELECT',
    default: true,
    help: 'elect one active replica through a Lease',
  },
  {
    name: 'lease-name',
    type: 'string',
    env: 'EO_LEASE_NAME',
    default: 'endpoint-operator-leader',
    placeholder: 'NAME',
    help: 'name of the leader-election Lease',
  },
  {
    name: 'identity',
    type: 'string',
    env: 'POD_NAME',
    placeholder: 'ID',
    help: 'this replica in the Lease (default: hostname plus a random suffix)',
  },
  {
    name: 'lease-duration',
    type: 'number',
    env: 'EO_LEASE_DURATION',
    default: 15,
    placeholder: 'SECONDS',
    help: 'how long followers wait after the last renewal before taking the lease over',
  },
  {
    name: 'renew-deadline',
    type: 'number',
    env: 'EO_RENEW_DEADLINE',
    default: 10,
    placeholder: 'SECONDS',
    help: 'how long the leader keeps retrying a renewal before it gives up leadership (< lease duration)',
  },
  {
    name: 'retry-period',
    type: 'number',
    env: 'EO_RETRY_PERIOD',
    default: 2,
    placeholder: 'SECONDS',
    help: 'interval between attempts to acquire or renew the lease',
  },
  {
    name: 'health-port',
    type: 'number',
    env: 'EO_HEALTH_PORT',
    default: 8081,
    placeholder: 'PORT',
    help: '/healthz and /readyz (-1 = off)',
  },
  {
    name: 'metrics-port',
    type: 'number',
    env: 'EO_METRICS_PORT',
    default: 8080,
    placeholder: 'PORT',
    help: '/metrics in Prometheus text format (-1 = off)',
  },
  {
    name: 'metrics-auth',
    type: 'string',
    env: 'EO_METRICS_AUTH',
    default: 'token-review',
    placeholder: 'MODE',
    help: 'token-review: /metrics needs a bearer token whose user may get the URL /metrics (ClusterRole endpoint-operator-metrics-reader); none: open',
  },
  {
    name: 'bind-address',
    type: 'string',
    env: 'EO_BIND_ADDRESS',
    default: '0.0.0.0',
    placeholder: 'ADDR',
    help: 'address of the health, metrics and webhook servers',
  },
  {
    name: 'webhook',
    type: 'boolean',
    env: 'EO_WEBHOOK',
    default: true,
    help: 'serve the admission and conversion webhooks and register them',
  },
  {
    name: 'webhook-port',
    type: 'number',
    env: 'EO_WEBHOOK_PORT',
    default: 9443,
    placeholder: 'PORT',
    help: 'HTTPS port of the webhooks (the Service targets it)',
  },
  {
    name: 'webhook-service',
    type: 'string',
    env: 'EO_WEBHOOK_SERVICE',
    default: DEFAULT_WEBHOOK_SETTINGS.serviceName,
    placeholder: 'NAME',
    help: 'Service in front of the webhooks (in-cluster mode)',
  },
  {
    name: 'webhook-url-host',
    type: 'string',
    env: 'EO_WEBHOOK_URL_HOST',
    placeholder: 'HOST',
    help: 'register the webhooks by URL https://HOST:PORT instead of the Service (an API server outside the cluster, as in dev)',
  },
  {
    name: 'cert-manager-certificate',
    type: 'string',
    env: 'EO_CERT_MANAGER_CERTIFICATE',
    placeholder: 'NAME',
    help: 'let cert-manager issue the webhook certificate (Certificate NAME in the operator namespace) instead of managing it',
  },
  {
    name: 'webhook-headers-timeout',
    type: 'number',
    env: 'EO_WEBHOOK_HEADERS_TIMEOUT',
    default: WEBHOOK_SERVER_LIMITS.headersTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'webhooks: a request line and headers must arrive within it (else 408)',
  },
  {
    name: 'webhook-request-timeout',
    type: 'number',
    env: 'EO_WEBHOOK_REQUEST_TIMEOUT',
    default: WEBHOOK_SERVER_LIMITS.requestTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'webhooks: a whole request, body included, must arrive within it (else 408)',
  },
  {
    name: 'webhook-keep-alive-timeout',
    type: 'number',
    env: 'EO_WEBHOOK_KEEP_ALIVE_TIMEOUT',
    default: WEBHOOK_SERVER_LIMITS.keepAliveTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'webhooks: an idle kept-alive connection is closed after it',
  },
  {
    name: 'webhook-max-connections',
    type: 'number',
    env: 'EO_WEBHOOK_MAX_CONNECTIONS',
    default: WEBHOOK_SERVER_LIMITS.maxConnections,
    placeholder: 'N',
    help: 'webhooks: open connections (more are refused)',
  },
  { name: 'signin', type: 'boolean', env: 'EO_SIGNIN', default: false, help: 'serve the point-of-sale sign-in API' },
  {
    name: 'signin-namespace',
    type: 'string',
    env: 'EO_SIGNIN_NAMESPACE',
    placeholder: 'NS',
    help: 'namespace of the Shops and users the sign-in API serves (default: the operator namespace)',
  },
  {
    name: 'signin-port',
    type: 'number',
    env: 'EO_SIGNIN_PORT',
    default: 8443,
    placeholder: 'PORT',
    help: 'port of the sign-in API',
  },
  {
    name: 'signin-host',
    type: 'string',
    env: 'EO_SIGNIN_HOST',
    default: '0.0.0.0',
    placeholder: 'ADDR',
    help: 'address of the sign-in API',
  },
  {
    name: 'signin-trusted-proxies',
    type: 'string',
    env: 'EO_SIGNIN_TRUSTED_PROXIES',
    placeholder: 'HOPS|CIDRS',
    help: 'proxies in front of the sign-in API whose X-Forwarded-For names the client (for the per-address limits): a hop count (1 = one ingress) or comma-separated proxy addresses/CIDRs; default none (the TCP peer is the client)',
  },
  {
    name: 'signin-headers-timeout',
    type: 'number',
    env: 'EO_SIGNIN_HEADERS_TIMEOUT',
    default: SIGNIN_SERVER_LIMITS.headersTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'sign-in API: a request line and headers must arrive within it (else 408)',
  },
  {
    name: 'signin-request-timeout',
    type: 'number',
    env: 'EO_SIGNIN_REQUEST_TIMEOUT',
    default: SIGNIN_SERVER_LIMITS.requestTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'sign-in API: a whole request, body included, must arrive within it (else 408)',
  },
  {
    name: 'signin-keep-alive-timeout',
    type: 'number',
    env: 'EO_SIGNIN_KEEP_ALIVE_TIMEOUT',
    default: SIGNIN_SERVER_LIMITS.keepAliveTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'sign-in API: an idle kept-alive connection is closed after it',
  },
  {
    name: 'signin-verify-concurrency',
    type: 'number',
    env: 'EO_SIGNIN_VERIFY_CONCURRENCY',
    default: 0,
    placeholder: 'N',
    help: 'sign-in API: password verifications run at once (0 = the number of cores)',
  },
  {
    name: 'signin-verify-per-client',
    type: 'number',
    env: 'EO_SIGNIN_VERIFY_PER_CLIENT',
    default: DEFAULT_VERIFICATION_LIMITS.perClient,
    placeholder: 'N',
    help: 'sign-in API: verifications one client address (or device token) may have running or queued; more are answered 429 at once',
  },
  {
    name: 'signin-verify-queue',
    type: 'number',
    env: 'EO_SIGNIN_VERIFY_QUEUE',
    default: DEFAULT_VERIFICATION_LIMITS.queueLength,
    placeholder: 'N',
    help: 'sign-in API: verifications waiting in all; more are answered 429 at once',
  },
  {
    name: 'signin-max-connections',
    type: 'number',
    env: 'EO_SIGNIN_MAX_CONNECTIONS',
    default: SIGNIN_SERVER_LIMITS.maxConnections,
    placeholder: 'N',
    help: 'sign-in API: open connections; at the cap a new one closes the oldest idle or slow one',
  },
];

const HELP = `Usage: endpoint-operator run [flags]

Runs the controllers, the admission and conversion webhooks, health and metrics (and the sign-in
API with --signin) against a cluster. Every flag can also be set by its environment variable.

Flags:
${renderFlags(RUN_FLAGS)}
  --help                              show this help`;

/**
 * The three client-go leader-election timings (controller-runtime exposes the same three), checked
 * as client-go checks them: the leader must give up before a follower may take over
 * (renew-deadline < lease-duration), and must get more than one jittered retry into its deadline
 * (renew-deadline > 1.2 × retry-period). The lease duration is stored in the Lease in whole seconds.
 */
function leaseTimingsOf(values: FlagValues): {
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
} {
  const positive = (name: string): number => {
    const seconds = num(values, name);
    if (!(seconds > 0)) throw new UsageError(`--${name} must be a positive number of seconds, got ${seconds}`);
    return seconds;
  };
  const leaseDurationSeconds = positive('lease-duration');
  const renewDeadlineSeconds = positive('renew-deadline');
  const retryPeriodSeconds = positive('retry-period');
  if (!Number.isInteger(leaseDurationSeconds))
    throw new UsageError(
      `--lease-duration must be whole seconds (the Lease stores it so), got ${leaseDurationSeconds}`,
    );
  if (renewDeadlineSeconds >= leaseDurationSeconds) {
    throw new UsageError(
      `--renew-deadline (${renewDeadlineSeconds}s) must be shorter than --lease-duration (${leaseDurationSeconds}s)`,
    );
  }
  if (renewDeadlineSeconds <= 1.2 * retryPeriodSeconds) {
    throw new UsageError(
      `--renew-deadline (${renewDeadlineSeconds}s) must be longer than 1.2 × --retry-period (${retryPeriodSeconds}s)`,
    );
  }
  return { leaseDurationSeconds, renewDeadlineSeconds, retryPeriodSeconds };
}

/** Maps parsed flags onto the process configuration (pure, so it is unit-tested). */
export function runConfig(values: FlagValues): ProcessConfig {
  const operatorNamespace = str(values, 'operator-namespace') ?? 'endpoint-operator-system';
  const reservedPrefixes = list(values, 'reserved-prefix');
  const identity = str(values, 'identity');
  const workers = num(values, 'workers');
  if (!Number.isInteger(workers) || workers < 1)
    throw new UsageError(`--workers must be a positive integer, got ${workers}`);
  const leaseTimings = leaseTimingsOf(values);
  const project = str(values, 'project') ?? DEFAULT_PROJECT_TEMPLATE;
  const projectProblem = projectTemplateProblem(project);
  if (projectProblem !== undefined) throw new UsageError(`--project ${JSON.stringify(project)} ${projectProblem}`);
  const gatewayTls = gatewayTlsOf(values, operatorNamespace);
  const gatewayUrl = str(values, 'gateway-url') ?? defaultGatewayUrl(operatorNamespace, gatewayTls !== undefined);
  const modelNetworkPolicy = modelNetworkPolicyConfig(values, operatorNamespace);
  const gatewayProblem = gatewayUrlProblem(gatewayUrl);
  if (gatewayProblem !== undefined)
    throw new UsageError(`--gateway-url ${JSON.stringify(gatewayUrl)} ${gatewayProblem}`);
  const bindAddress = str(values, 'bind-address') ?? '0.0.0.0';
  const webhookPort = num(values, 'webhook-port');
  const urlHost = str(values, 'webhook-url-host');
  const certificate = str(values, 'cert-manager-certificate');
  const webhookOverrides: Partial<WebhookSettings> = {
    namespace: operatorNamespace,
    serviceName: str(values, 'webhook-service') ?? DEFAULT_WEBHOOK_SETTINGS.serviceName,
    reservedPrefixes,
    ...(certificate ? { certificates: { mode: 'cert-manager', certificate } } : {}),
  };
  const webhookSettings: WebhookSettings = urlHost
    ? localWebhookSettings(webhookPort, webhookOverrides, urlHost)
    : // The configurations name the Service's port (443, which targets the container's --webhook-port), not the pod's.
      { ...DEFAULT_WEBHOOK_SETTINGS, ...webhookOverrides, endpoint: DEFAULT_WEBHOOK_SETTINGS.endpoint };
  return {
    operator: {
      project,
      location: str(values, 'location') ?? 'us-central1',
      gatewayUrl,
      namespaces: list(values, 'namespaces'),
      workers,
      reservedPrefixes,
      ...(str(values, 'machine-catalogue') !== undefined
        ? { machineCatalogueConfigMap: str(values, 'machine-catalogue') }
        : {}),
      ...(modelNetworkPolicy === undefined ? {} : { modelNetworkPolicy }),
      leaderElection: {
        enabled: bool(values, 'leader-elect'),
        namespace: operatorNamespace,
        leaseName: str(values, 'lease-name') ?? 'endpoint-operator-leader',
        ...(identity ? { identity } : {}),
        ...leaseTimings,
      },
      healthPort: num(values, 'health-port'),
      metricsPort: num(values, 'metrics-port'),
      bindAddress,
      metricsAuth: metricsAuthOf(values),
    },
    ...(bool(values, 'webhook')
      ? {
          webhook: {
            settings: webhookSettings,
            listen: { host: bindAddress, port: webhookPort },
            serverLimits: serverLimitsOf(values, 'webhook-'),
          },
        }
      : {}),
    ...(gatewayTls === undefined ? {} : { gatewayTls }),
    ...(bool(values, 'signin')
      ? {
          signin: {
            namespace: str(values, 'signin-namespace') ?? operatorNamespace,
            host: str(values, 'signin-host') ?? '0.0.0.0',
            port: num(values, 'signin-port'),
            ...trustedProxiesOf(values),
            serverLimits: serverLimitsOf(values, 'signin-'),
            verificationLimits: verificationLimitsOf(values),
          },
        }
      : {}),
  };
}

function gatewayTlsOf(values: FlagValues, namespace: string): GatewayTlsSettings | undefined {
  const issuer = str(values, 'gateway-tls-issuer') ?? DEFAULT_GATEWAY_TLS.issuer;
  if (issuer === 'none') return undefined;
  if (!GATEWAY_CERTIFICATE_ISSUERS.includes(issuer as GatewayCertificateIssuer))
    throw new UsageError(
      `--gateway-tls-issuer must be one of ${[...GATEWAY_CERTIFICATE_ISSUERS, 'none'].join(', ')}, got ${JSON.stringify(issuer)}`,
    );
  return {
    ...DEFAULT_GATEWAY_TLS,
    issuer: issuer as GatewayCertificateIssuer,
    namespace,
    secretName: str(values, 'gateway-tls-secret') ?? DEFAULT_GATEWAY_TLS.secretName,
    serviceName: str(values, 'gateway-service') ?? DEFAULT_GATEWAY_TLS.serviceName,
  };
}

function metricsAuthOf(values: FlagValues): AuthMode {
  const mode = str(values, 'metrics-auth') ?? 'token-review';
  if (!AUTH_MODES.includes(mode as AuthMode))
    throw new UsageError(`--metrics-auth must be one of ${AUTH_MODES.join(', ')}, got ${JSON.stringify(mode)}`);
  return mode as AuthMode;
}

function verificationLimitsOf(values: FlagValues): Partial<VerificationLimits> {
  const concurrency = num(values, 'signin-verify-concurrency');
  if (!Number.isInteger(concurrency) || concurrency < 0)
    throw new UsageError(
      `--signin-verify-concurrency must be a whole number (0 = the number of cores), got ${concurrency}`,
    );
  return {
    ...(concurrency > 0 ? { concurrency } : {}),
    perClient: wholePositive(values, 'signin-verify-per-client'),
    queueLength: wholePositive(values, 'signin-verify-queue'),
  };
}

function trustedProxiesOf(values: FlagValues): { trustedProxies?: TrustedProxies } {
  const text = str(values, 'signin-trusted-proxies');
  if (text === undefined || text.trim() === '') return {};
  try {
    return { trustedProxies: parseTrustedProxies(text) };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function main(argv: string[]): Promise<number> {
  let values: FlagValues;
  let config: ProcessConfig;
  try {
    values = parseFlags(RUN_FLAGS, argv);
    if (values.help === true) {
      console.log(HELP);
      return 0;
    }
    config = runConfig(values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`endpoint-operator run: ${err.message}\n\n${HELP}`);
    return 2;
  }
  const log = createLogger();
  // process_resident_memory_bytes, nodejs_heap_*, event-loop lag: what memory and CPU alerts are written against.
  collectProcessMetrics();
  const telemetry = startTelemetry('endpoint-operator', process.env, log);
  const shutdown = new Shutdown({ logger: log }).install();
  const client = KubeClient.fromKubeconfig(str(values, 'kubeconfig'));
  let running;
  try {
    running = await startOperatorProcess(client, config, log, shutdown.signal);
  } catch (err) {
    log.error({ err }, 'endpoint-operator failed to start');
    shutdown.uninstall();
    return 1;
  }
  log.info(
    {
      identity: config.operator.leaderElection.identity ?? hostname(),
      webhook: config.webhook !== undefined,
      signin: config.signin?.port,
    },
    'endpoint-operator running',
  );
  const proc = running;
  shutdown.addStep({ name: 'operator', run: () => proc.stop() });
  if (telemetry !== undefined) shutdown.addStep({ name: 'telemetry', run: () => telemetry.shutdown() });
  const outcome = await Promise.race([
    proc.operator.done,
    new Promise<'signal'>((resolve) =>
      shutdown.signal.addEventListener('abort', () => resolve('signal'), { once: true }),
    ),
  ]);
  if (outcome === 'leadershipLost') {
    // Like controller-runtime: a replica that lost its lease exits so that it restarts clean.
    log.error('leadership lost; exiting so that this replica restarts');
    await shutdown.run(1);
    return 1;
  }
  await shutdown.run(0);
  return 0;
}
