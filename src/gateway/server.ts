/**
 * The gateway: the data plane of PredictionEndpoints (and of the registry lookup), one fastify server
 * fed by informers. Stateless: every replica watches for itself and serves; nothing is elected.
 *
 * Building one, and adding a route plugin that shares the informer caches:
 *
 *   const gateway = await GatewayServer.create({ client, namespaces, listen: { host, port }, log, ... });
 *   gateway.register(async (app, ctx) => {
 *     // ctx.informers.informer(ref, namespace) returns the SAME shared informer the routing table uses
 *     // (one watch per resource and namespace); ctx.namespaces is the watch scope ([] = all).
 *     const services = ctx.namespaces.length ? ctx.namespaces.map((ns) => ctx.informers.informer(ref, ns)) : [ctx.informers.informer(ref)];
 *     app.post('/v1/projects/:project/locations/:location/namespaces/:ns/services/:call', handler);
 *   });
 *   await gateway.start();   // starts every informer (those plugins created too), waits for sync, listens
 *   ...
 *   await gateway.close();
 *
 * Plugins are registered before `start()`, each in its own fastify encapsulation context (so their
 * content-type parsers and hooks stay theirs); whatever they throw is answered by the gateway's one
 * error answerer (error-answer.ts: Google's JSON error form), as are unknown paths (404 NOT_FOUND)
 * and oversized bodies (413). `POST /v1/projects/{p}/locations/{l}/endpoints/{e}:{method}` is the
 * prediction pipeline's (prediction/pipeline.ts), served on the port's node:http server beside
 * fastify, so plugins must not use that path; every other path is theirs.
 * Health (`/healthz`, `/readyz`: informers synced) and `/metrics` are served on a separate port.
 */
import fastify, { type FastifyInstance } from 'fastify';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HealthChecks, startHealthServer, type RunningHealthServer } from '../runtime/health-server.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../base/logger.js';
import { requestIdOf } from '../http/request-id.js';
import { GATEWAY_SERVER_LIMITS, type ServerLimits } from '../http/server-limits.js';
import {
  createServer,
  setServerCertificate,
  type AnyRequest,
  type AnyResponse,
  type RequestHandler,
  type TlsPair,
} from '../http/server.js';
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { GatewayAuth } from './auth/gateway-auth.js';
import type { AuthSettings } from './auth/settings.js';
import { namespaceReader } from './auth/targets.js';
import { installErrorAnswerer } from './error-answer.js';
import { registryLookupPlugin, registryLookupSource } from './registry/plugin.js';
import { endpointRoutes } from './endpoints/routes.js';
import { apiRoutes } from './writes/api-routes.js';
import { writeApiMethods } from './writes/write-api.js';
import { InformerSet } from './informer-set.js';
import { CallerLimiter, DEFAULT_MAX_BODY_BYTES_PER_CALLER, DEFAULT_MAX_CALLS_PER_CALLER } from './fairness.js';
import { gatewayEjections } from './metrics.js';
import { OutlierDetector } from './outlier-detection.js';
import { isPredictionRequest } from './prediction/admit.js';
import { PredictionPipeline } from './prediction/pipeline.js';
import { serveRest } from './prediction/rest-transport.js';
import { grpcHandler, isGrpcRequest } from './grpc/handler.js';
import { DEFAULT_LARGE_BODY_BYTES, JsonWorkerPool } from './json-worker-pool.js';
import { CloudEventSink } from './cloudevents-sink.js';
import { RequestLogger } from './request-log.js';
import { sendPortRefusal } from './port-refusal.js';
import { RoutingTable } from './routing-table.js';
import { GatewayTracing } from './tracing.js';
import { TrafficSplitter } from './traffic-split.js';
import { UpstreamClient } from './upstream.js';

export interface GatewayOptions {
  readonly client: KubeClient;
  /** Namespaces to watch; empty = all. */
  readonly namespaces: readonly string[];
  readonly listen: { readonly host: string; readonly port: number };
  /**
   * The port's certificate: TLS with HTTP/1.1 and HTTP/2 (REST and gRPC on one address). Absent = plain HTTP/1.1,
   * REST only: an explicit choice, for a gateway behind a proxy or mesh that terminates TLS.
   */
  readonly tls?: TlsPair | undefined;
  /** /healthz, /readyz and /metrics; absent or negative = not served. */
  readonly health?: { readonly host: string; readonly port: number };
  readonly log: Logger;
  /** Deadline of one model server call (retry included). Default 60 s. */
  readonly upstreamTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  /** Largest request body; bigger ones are answered 413. Default 1.5 MB (Vertex's online prediction limit). */
  readonly bodyLimitBytes?: number;
  /** Header whose value pins requests to one deployed model while the split is unchanged; '' or absent = off. */
  readonly stickyHeader?: string;
  readonly requestLog?: {
    readonly payloadLimitBytes?: number;
    readonly maxRecordsPerSecond?: number;
    /** URL that sampled calls are also sent to as KServe-compatible CloudEvents; absent = only the log. */
    readonly sink?: string | undefined;
    readonly sinkQueue?: { readonly maxEvents?: number; readonly timeoutMs?: number };
  };
  readonly outliers?: { readonly consecutiveFailures?: number; readonly baseEjectionMs?: number };
  /** Annotation prefixes the registry lookup leaves out of effective annotations; default the operator's. */
  readonly reservedPrefixes?: readonly string[];
  /** Authentication and authorization of calls and /metrics (auth/settings.ts; NO_AUTH = --auth=none). */
  readonly auth: AuthSettings;
  /** Timeouts and connection cap of the API port; default GATEWAY_SERVER_LIMITS. */
  readonly serverLimits?: Partial<ServerLimits>;
  /**
   * How long close() keeps answering HTTP/1.1 calls with `Connection: close` before the port closes, so that a
   * rolling restart loses no keep-alive client's call (src/http/drain.ts). Default 0; the gateway command drains.
   */
  readonly shutdownDrainMs?: number;
  /** Prediction calls in flight per caller; one more is answered 429 (fairness.ts). Default DEFAULT_MAX_CALLS_PER_CALLER. */
  readonly maxCallsPerCaller?: number;
  /** Request-body bytes in flight per caller; one more call is answered 429 (fairness.ts). Default DEFAULT_MAX_BODY_BYTES_PER_CALLER. */
  readonly maxBodyBytesPerCaller?: number;
  /**
   * Vertex's write API (writes/): false = every write method answers FAILED_PRECONDITION naming the chart's
   * gateway.apiWrites.enabled (the gateway's ServiceAccount then has no write rights). Default true.
   */
  readonly apiWrites?: boolean;
  /** Request and answer bodies from this size up have their JSON work done on worker threads (json-worker-pool.ts); default 256 KiB. */
  readonly largeBodyBytes?: number;
}

/** What a route plugin gets besides its fastify scope. */
export interface GatewayContext {
  readonly client: KubeClient;
  /** The gateway's shared informers: `informers.informer(ref, namespace)`. */
  readonly informers: InformerSet;
  readonly namespaces: readonly string[];
  readonly routing: RoutingTable;
  readonly log: Logger;
  /** Authenticates and authorises calls (auth/gateway-auth.ts); plugins call it from an onRequest hook. */
  readonly auth: GatewayAuth;
  /** The namespace a project names (the --project template read backwards: auth/targets.ts). */
  readonly readNamespace: (project: string) => string | undefined;
}

export type GatewayPlugin = (app: FastifyInstance, ctx: GatewayContext) => void | Promise<void>;

export const DEFAULT_BODY_LIMIT_BYTES = 1_500_000;
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

export class GatewayServer {
  readonly app: FastifyInstance;
  readonly context: GatewayContext;
  readonly upstream: UpstreamClient;
  private readonly stopping = new AbortController();
  private health: RunningHealthServer | undefined;
  private readonly requestLog: RequestLogger;
  private readonly jsonWorkers = new JsonWorkerPool();
  private started = false;

  private constructor(private readonly options: GatewayOptions) {
    const informers = new InformerSet(options.client, options.log);
    const routing = new RoutingTable(informers, options.namespaces);
    const auth = GatewayAuth.create(options.client, options.auth, options.log);
    this.context = {
      client: options.client,
      informers,
      namespaces: options.namespaces,
      routing,
      log: options.log,
      auth,
      readNamespace: namespaceReader(options.auth.projectTemplate),
    };
    const outliers = new OutlierDetector(options.outliers ?? {});
    outliers.onEject = (origin, until) => {
      gatewayEjections.inc();
      options.log.warn({ origin, until: new Date(until).toISOString() }, 'model server endpoint ejected');
    };
    this.upstream = new UpstreamClient({
      timeoutMs: options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
      ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
      outliers,
    });
    const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
    const limits: ServerLimits = { ...GATEWAY_SERVER_LIMITS, ...options.serverLimits };
    const splitter = new TrafficSplitter();
    const sink = options.requestLog?.sink;
    const requestLog = new RequestLogger(options.log.child({ component: 'prediction-log' }), {
      payloadLimitBytes: options.requestLog?.payloadLimitBytes ?? 16_384,
      maxRecordsPerSecond: options.requestLog?.maxRecordsPerSecond ?? 100,
      sink:
        sink === undefined || sink === ''
          ? undefined
          : new CloudEventSink({
              url: sink,
              log: options.log.child({ component: 'request-log-sink' }),
              ...(options.requestLog?.sinkQueue?.maxEvents !== undefined
                ? { maxQueuedEvents: options.requestLog.sinkQueue.maxEvents }
                : {}),
              ...(options.requestLog?.sinkQueue?.timeoutMs !== undefined
                ? { timeoutMs: options.requestLog.sinkQueue.timeoutMs }
                : {}),
            }),
    });
    this.requestLog = requestLog;
    const sticky = options.stickyHeader?.trim().toLowerCase();
    const predictions = new PredictionPipeline({
      routing,
      splitter,
      upstream: this.upstream,
      requestLog,
      stickyHeader: sticky === '' ? undefined : sticky,
      bodyLimit,
      tracing: new GatewayTracing(),
      auth,
      readNamespace: this.context.readNamespace,
      log: options.log,
      callers: new CallerLimiter(
        options.maxCallsPerCaller ?? DEFAULT_MAX_CALLS_PER_CALLER,
        options.maxBodyBytesPerCaller ?? DEFAULT_MAX_BODY_BYTES_PER_CALLER,
      ),
      jsonWorkers: this.jsonWorkers,
      largeBodyBytes: options.largeBodyBytes ?? DEFAULT_LARGE_BODY_BYTES,
    });
    const lookup = registryLookupSource(this.context, options.reservedPrefixes ?? DEFAULT_RESERVED_PREFIXES);
    const api = writeApiMethods({
      client: options.client,
      gate: { auth, readNamespace: this.context.readNamespace, writesEnabled: options.apiWrites ?? true },
      routing,
    });
    const grpc = grpcHandler({
      predictions,
      bodyLimit,
      reads: { endpoints: this.context, registry: { source: lookup, auth } },
      api,
      log: options.log,
    });
    const dispatch = (req: AnyRequest, res: AnyResponse, fastifyHandler: RequestHandler, awaitingContinue: boolean) => {
      if (isGrpcRequest(req)) return grpc(req, res);
      if (isPredictionRequest(req.method, req.url)) {
        serveRest(predictions, req, res, awaitingContinue).catch((err: unknown) =>
          options.log.error({ err }, 'prediction call failed after its answer'),
        );
        return;
      }
      if (awaitingContinue) res.writeContinue();
      fastifyHandler(req, res);
    };
    // One port for every call: gRPC (by its content type), the prediction pipeline over REST (which reads and
    // answers on the server's request itself: it decides whether to read a body or close rather than read one,
    // and when to send `100 Continue`, which fastify's body parsing would decide for it), and fastify for the rest.
    this.app = fastify({
      bodyLimit,
      logger: false,
      return503OnClosing: true,
      genReqId: requestIdOf,
      requestIdHeader: false,
      serverFactory: (handler) =>
        createServer({
          limits,
          tls: options.tls,
          front: { refuse: sendPortRefusal },
          onRequest: (req, res) => dispatch(req, res, handler as RequestHandler, false),
          // `Expect: 100-continue` (curl sends it for large bodies): a prediction call is admitted before the
          // client is told to send its body, so a refused one costs no body at all (RFC 9110 §10.1.1).
          onCheckContinue: (req, res) => dispatch(req, res, handler as RequestHandler, true),
          drainMs: options.shutdownDrainMs ?? 0,
          onTlsError: (client, err) =>
            options.log.warn({ client, err: err.message }, 'a client failed its TLS handshake with the gateway'),
        }) as http.Server,
    });
    installErrorAnswerer(this.app, { log: options.log, bodyLimit });
    // Service Directory's lookup API (POST /v1/{service}:resolve, GET service and endpoints) over the same informers.
    this.register(registryLookupPlugin(lookup));
    // Vertex's Endpoint reads (GET an endpoint, list them), which Google's SDKs make before they predict.
    this.register(endpointRoutes);
    // Vertex's write API (ModelService, EndpointService writes, google.longrunning.Operations): writes/.
    this.register(apiRoutes(api));
  }

  /** A renewed certificate, for new connections (the Secret rotated; see tls/serving-certificate.ts). */
  setCertificate(tls: TlsPair): void {
    setServerCertificate(this.app.server, tls);
  }

  static async create(options: GatewayOptions): Promise<GatewayServer> {
    return new GatewayServer(options);
  }

  /** Adds a route plugin in its own encapsulation context; call before `start()`. */
  register(plugin: GatewayPlugin): this {
    if (this.started) throw new Error('GatewayServer.register must be called before start()');
    void this.app.register(async (scope) => plugin(scope, this.context));
    return this;
  }

  /** Starts the informers, waits until they have synced, then listens; resolves to the bound port. */
  async start(): Promise<{ port: number; healthPort: number | undefined }> {
    this.started = true;
    const { informers } = this.context;
    await this.app.ready();
    informers.start(this.stopping.signal);
    const checks = new HealthChecks();
    checks.addReadyCheck('informers-synced', informers.readyCheck());
    checks.addLiveCheck('ping', () => true);
    if (this.options.health !== undefined && this.options.health.port >= 0) {
      this.health = await startHealthServer({
        port: this.options.health.port,
        host: this.options.health.host,
        checks,
        guardMetrics: (req) => this.context.auth.guardMetrics(req),
        log: this.options.log,
      });
    }
    // Serving before the caches are complete would answer NOT_FOUND for endpoints that exist.
    if (!(await informers.waitForSync(this.stopping.signal)))
      throw new Error('gateway stopped before its caches synced');
    await this.app.listen({ host: this.options.listen.host, port: this.options.listen.port });
    const port = (this.app.server.address() as AddressInfo).port;
    this.options.log.info({ port, namespaces: this.options.namespaces }, 'gateway serving');
    return { port, healthPort: this.health?.port };
  }

  async close(): Promise<void> {
    this.stopping.abort();
    await this.app.close();
    await this.health?.close();
    await this.upstream.close();
    await this.requestLog.close();
    await this.jsonWorkers.close();
    await this.context.informers.stopped();
  }
}
