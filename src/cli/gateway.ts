/**
 * `endpoint-operator gateway`: the prediction data plane (see src/gateway/server.ts). Stateless, no
 * leader election: run as many replicas as the traffic needs behind one ClusterIP Service.
 */
import { GatewayServer } from '../gateway/server.js';
import { DEFAULT_GATEWAY_SETTINGS as D, gatewaySettings, type GatewaySettings } from '../gateway/settings.js';
import { KubeClient } from '../kube/kube-client.js';
import { createLogger } from '../base/logger.js';
import { collectProcessMetrics } from '../base/metrics.js';
import { GATEWAY_GRACE_SECONDS, GATEWAY_PRESTOP_SECONDS } from '../deploy/gateway.js';
import { Shutdown } from '../runtime/shutdown.js';
import { startTelemetry } from '../runtime/telemetry.js';
import { watchServingCertificate } from '../gateway/tls/serving-certificate.js';
import { GATEWAY_AUTH_FLAGS, gatewayAuthConfig } from './gateway-auth-flags.js';
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

/**
 * After SIGTERM (and the chart's preStop pause, by which the pod has left its Service's endpoints), HTTP/1.1
 * clients are told to reconnect for this long before the port closes: kept-alive connections each see one
 * `Connection: close` answer within it at any steady call rate, well inside the grace period.
 */
export const SHUTDOWN_DRAIN_MS = 3000;
/**
 * The whole shutdown's bound: the chart's grace period less its preStop sleep, less a margin for the exit itself.
 * A call still in flight after it (its model server stalled: the upstream timeout is longer) fails either way, but
 * the process ends with exit 0 and a log line, not with the kubelet's SIGKILL at the grace period's end.
 */
const SHUTDOWN_BUDGET_MS = (GATEWAY_GRACE_SECONDS - GATEWAY_PRESTOP_SECONDS - 5) * 1000;

export const GATEWAY_FLAGS: readonly FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    env: 'KUBECONFIG',
    placeholder: 'PATH',
    help: 'kubeconfig file; without it: in-cluster config, then ~/.kube/config',
  },
  {
    name: 'namespaces',
    type: 'list',
    env: 'EO_NAMESPACES',
    default: [],
    placeholder: 'NS[,NS]',
    help: 'namespaces to serve; empty = all namespaces',
  },
  {
    name: 'bind-address',
    type: 'string',
    env: 'EO_GATEWAY_BIND_ADDRESS',
    default: '0.0.0.0',
    placeholder: 'ADDR',
    help: 'address of the prediction API and of health and metrics',
  },
  {
    name: 'port',
    type: 'number',
    env: 'EO_GATEWAY_PORT',
    default: 8090,
    placeholder: 'PORT',
    help: 'port of the prediction API (POST /v1/{endpoint}:predict, :explain, :rawPredict)',
  },
  {
    name: 'health-port',
    type: 'number',
    env: 'EO_GATEWAY_HEALTH_PORT',
    default: 8091,
    placeholder: 'PORT',
    help: '/healthz, /readyz and /metrics (-1 = off)',
  },
  {
    name: 'upstream-timeout',
    type: 'number',
    env: 'EO_GATEWAY_UPSTREAM_TIMEOUT',
    default: D.upstreamTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'deadline of one model server call, retry included (answered 504 when passed)',
  },
  {
    name: 'connect-timeout',
    type: 'number',
    env: 'EO_GATEWAY_CONNECT_TIMEOUT',
    default: D.connectTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'deadline of a connection to a model server (then the call is retried on another endpoint)',
  },
  {
    name: 'body-limit',
    type: 'number',
    env: 'EO_GATEWAY_BODY_LIMIT',
    default: D.bodyLimitBytes,
    placeholder: 'BYTES',
    help: 'largest request body (answered 413 above it)',
  },
  {
    name: 'sticky-header',
    type: 'string',
    env: 'EO_GATEWAY_STICKY_HEADER',
    default: 'x-eo-sticky-key',
    placeholder: 'NAME',
    help: "request header whose value pins calls to one deployed model while the split is unchanged ('' = off)",
  },
  {
    name: 'log-payload-limit',
    type: 'number',
    env: 'EO_GATEWAY_LOG_PAYLOAD_LIMIT',
    default: D.requestLog.payloadLimitBytes,
    placeholder: 'BYTES',
    help: 'request/response bodies in sampled prediction log records are truncated to this size',
  },
  {
    name: 'reserved-prefix',
    type: 'list',
    env: 'EO_RESERVED_PREFIXES',
    default: D.reservedPrefixes,
    placeholder: 'DOMAIN',
    help: 'annotation prefixes the registry lookup leaves out (as the operator is configured; repeatable)',
  },
  {
    name: 'request-log-sink',
    type: 'string',
    env: 'EO_GATEWAY_REQUEST_LOG_SINK',
    default: '',
    placeholder: 'URL',
    help: "also send sampled calls (predictRequestResponseLoggingConfig) to this URL as KServe-compatible CloudEvents ('' = only the log)",
  },
  {
    name: 'headers-timeout',
    type: 'number',
    env: 'EO_GATEWAY_HEADERS_TIMEOUT',
    default: D.serverLimits.headersTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'a request line and headers must arrive within it (else 408 and the connection is closed)',
  },
  {
    name: 'request-timeout',
    type: 'number',
    env: 'EO_GATEWAY_REQUEST_TIMEOUT',
    default: D.serverLimits.requestTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'a whole request, body included, must arrive within it (else 408 and the connection is closed)',
  },
  {
    name: 'keep-alive-timeout',
    type: 'number',
    env: 'EO_GATEWAY_KEEP_ALIVE_TIMEOUT',
    default: D.serverLimits.keepAliveTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'an idle kept-alive connection is closed after it',
  },
  {
    name: 'max-connections',
    type: 'number',
    env: 'EO_GATEWAY_MAX_CONNECTIONS',
    default: D.serverLimits.maxConnections,
    placeholder: 'N',
    help: 'open connections of the API port; at the cap a new one closes the oldest idle or slow one',
  },
  {
    name: 'max-calls-per-caller',
    type: 'number',
    env: 'EO_GATEWAY_MAX_CALLS_PER_CALLER',
    default: D.maxCallsPerCaller,
    placeholder: 'N',
    help: 'prediction calls in flight per caller; one more is answered 429 RESOURCE_EXHAUSTED',
  },
  {
    name: 'max-body-bytes-per-caller',
    type: 'number',
    env: 'EO_GATEWAY_MAX_BODY_BYTES_PER_CALLER',
    default: D.maxBodyBytesPerCaller,
    placeholder: 'BYTES',
    help: 'request-body bytes in flight per caller (Content-Length); one more call is answered 429 RESOURCE_EXHAUSTED',
  },
  {
    name: 'log-max-records',
    type: 'number',
    env: 'EO_GATEWAY_LOG_MAX_RECORDS',
    default: D.requestLog.maxRecordsPerSecond,
    placeholder: 'N',
    help: 'most sampled prediction log records per second (the rest are counted, not written)',
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    env: 'EO_GATEWAY_TLS_CERT_FILE',
    placeholder: 'PATH',
    help: "the API port's serving certificate (PEM, the leaf first), e.g. tls.crt of the mounted Secret; re-read when it changes",
  },
  {
    name: 'tls-key-file',
    type: 'string',
    env: 'EO_GATEWAY_TLS_KEY_FILE',
    placeholder: 'PATH',
    help: 'its private key (PEM), e.g. tls.key of the mounted Secret',
  },
  {
    name: 'plain-http',
    type: 'boolean',
    env: 'EO_GATEWAY_PLAIN_HTTP',
    default: false,
    help: 'serve the API port without TLS: only behind a mesh or ingress that terminates TLS (Google clients need TLS)',
  },
  {
    name: 'api-writes',
    type: 'boolean',
    env: 'EO_GATEWAY_API_WRITES',
    default: true,
    help: "serve Vertex's write methods (ModelService, EndpointService writes) as server-side applies under the caller's field manager; false = they answer FAILED_PRECONDITION (the chart's gateway.apiWrites.enabled)",
  },
  ...GATEWAY_AUTH_FLAGS,
];

/** How the API port is secured: TLS from a certificate followed on disk (src/gateway/tls/serving-certificate.ts), or, by explicit choice, none. */
export type GatewayTransport =
  { readonly mode: 'tls'; readonly certFile: string; readonly keyFile: string } | { readonly mode: 'plain-http' };

/**
 * `--tls-cert-file` + `--tls-key-file`, or `--plain-http`: exactly one of the two. Google's clients speak
 * gRPC and REST over TLS only, so plain HTTP is never a default, only a stated choice.
 */
export function gatewayTransport(values: FlagValues): GatewayTransport {
  const certFile = str(values, 'tls-cert-file') ?? '';
  const keyFile = str(values, 'tls-key-file') ?? '';
  if (bool(values, 'plain-http')) {
    if (certFile !== '' || keyFile !== '')
      throw new UsageError('--plain-http serves no TLS: leave out --tls-cert-file and --tls-key-file, or --plain-http');
    return { mode: 'plain-http' };
  }
  if (certFile === '' || keyFile === '')
    throw new UsageError(
      'the gateway serves TLS: give --tls-cert-file and --tls-key-file (the mounted certificate Secret), or --plain-http behind a mesh or ingress that terminates TLS',
    );
  return { mode: 'tls', certFile, keyFile };
}

const HELP = `Usage: endpoint-operator gateway [flags]

Serves PredictionEndpoints' :predict, :explain and :rawPredict (Vertex AI's REST paths) and routes each
call by the endpoint's traffic split to the model servers named by DeployedModels' spec.backend; and
Service Directory's lookup of RegistryServices (POST /v1/{service}:resolve, GET /v1/{service}[/endpoints]). Every
replica serves. Every call needs a bearer token minted for the gateway's audience (TokenReview) and RBAC
permission on the object it names (SubjectAccessReview: verbs predict, explain on predictionendpoints;
resolve, get on registryservices; list on registryendpoints); /metrics needs get on the URL /metrics.
Every flag can also be set by its environment variable.

Flags:
${renderFlags(GATEWAY_FLAGS)}
  --help                              show this help`;

/** --request-log-sink: '' (off) or an http(s) URL. */
function requestLogSink(values: FlagValues): string | undefined {
  const raw = (str(values, 'request-log-sink') ?? '').trim();
  if (raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--request-log-sink must be an http or https URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--request-log-sink must be an http or https URL, got ${JSON.stringify(raw)}`);
  return raw;
}

function positive(values: FlagValues, name: string): number {
  const v = num(values, name);
  if (!(v > 0)) throw new UsageError(`--${name} must be positive, got ${v}`);
  return v;
}

function port(values: FlagValues, name: string, allowOff: boolean): number {
  const v = num(values, name);
  if (!Number.isInteger(v) || v > 65535 || v < (allowOff ? -1 : 0))
    throw new UsageError(`--${name} must be a port number (0..65535${allowOff ? ', or -1 for off' : ''}), got ${v}`);
  return v;
}

/** Flags → the gateway's settings, every one resolved (pure: the client, logger and certificate are not settings). */
export function gatewayConfig(values: FlagValues): GatewaySettings {
  const host = str(values, 'bind-address') ?? '0.0.0.0';
  const healthPort = port(values, 'health-port', true);
  const logLimit = num(values, 'log-payload-limit');
  if (!Number.isInteger(logLimit) || logLimit < 0)
    throw new UsageError(`--log-payload-limit must be a whole number of bytes, got ${logLimit}`);
  const bodyLimit = positive(values, 'body-limit');
  if (!Number.isInteger(bodyLimit))
    throw new UsageError(`--body-limit must be a whole number of bytes, got ${bodyLimit}`);
  return gatewaySettings({
    namespaces: list(values, 'namespaces'),
    listen: { host, port: port(values, 'port', false) },
    health: healthPort >= 0 ? { host, port: healthPort } : undefined,
    upstreamTimeoutMs: positive(values, 'upstream-timeout') * 1000,
    connectTimeoutMs: positive(values, 'connect-timeout') * 1000,
    bodyLimitBytes: bodyLimit,
    stickyHeader: str(values, 'sticky-header') ?? '',
    requestLog: {
      payloadLimitBytes: logLimit,
      maxRecordsPerSecond: positive(values, 'log-max-records'),
      sink: requestLogSink(values),
    },
    reservedPrefixes: list(values, 'reserved-prefix'),
    auth: gatewayAuthConfig(values),
    apiWrites: bool(values, 'api-writes'),
    serverLimits: serverLimitsOf(values, ''),
    maxCallsPerCaller: wholePositive(values, 'max-calls-per-caller'),
    maxBodyBytesPerCaller: wholePositive(values, 'max-body-bytes-per-caller'),
    shutdownDrainMs: SHUTDOWN_DRAIN_MS,
  });
}

export async function main(argv: string[]): Promise<number> {
  let values: FlagValues;
  let config: GatewaySettings;
  try {
    values = parseFlags(GATEWAY_FLAGS, argv);
    if (values.help === true) {
      console.log(HELP);
      return 0;
    }
    config = gatewayConfig(values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`endpoint-operator gateway: ${err.message}\n\n${HELP}`);
    return 2;
  }
  const log = createLogger();
  collectProcessMetrics();
  // Before the gateway is built: it checks once whether an SDK is registered.
  const telemetry = startTelemetry('endpoint-operator-gateway', process.env, log);
  const shutdown = new Shutdown({ logger: log, timeoutMs: SHUTDOWN_BUDGET_MS }).install();
  const client = KubeClient.fromKubeconfig(str(values, 'kubeconfig'));
  let gateway: GatewayServer;
  try {
    const transport = gatewayTransport(values);
    const certificate =
      transport.mode === 'tls'
        ? await watchServingCertificate({ certFile: transport.certFile, keyFile: transport.keyFile, log })
        : undefined;
    gateway = await GatewayServer.create({
      ...config,
      client,
      log,
      tls: certificate?.current(),
    });
    certificate?.onChange((pair) => gateway.setCertificate(pair));
    shutdown.addStep({ name: 'gateway', run: () => gateway.close() });
    if (certificate !== undefined) shutdown.addStep({ name: 'certificate', run: () => certificate.close() });
    if (telemetry !== undefined) shutdown.addStep({ name: 'telemetry', run: () => telemetry.shutdown() });
    await gateway.start();
  } catch (err) {
    log.error({ err }, 'gateway failed to start');
    await shutdown.run(1);
    return 1;
  }
  await new Promise<void>((resolve) => shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
  await shutdown.run(0);
  client.close();
  return 0;
}
