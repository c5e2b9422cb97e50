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
import {
  createServer,
  setServerCertificate,
  type AnyRequest,
  type AnyResponse,
  type RequestHandler,
  type TlsPair,
} from '../http/server.js';
import { GatewayAuth } from './auth/gateway-auth.js';
import { namespaceReader } from './auth/targets.js';
import { installErrorAnswerer } from './error-answer.js';
import { registryLookupPlugin, registryLookupSource } from './registry/plugin.js';
import { endpointRoutes } from './endpoints/routes.js';
import { apiRoutes } from './writes/api-routes.js';
import { writeApiMethods } from './writes/write-api.js';
import { InformerSet } from './informer-set.js';
import { CallerLimiter } from './fairness.js';
import { countInFlight, gatewayEjections } from './metrics.js';
import { OutlierDetector } from './outlier-detection.js';
import { isPredictionRequest } from './prediction/admit.js';
import { PredictionPipeline } from './prediction/pipeline.js';
import { serveRest } from './prediction/rest-transport.js';
import { grpcHandler, isGrpcRequest } from './grpc/handler.js';
import { JsonWorkerPool } from './json-worker-pool.js';
import { CloudEventSink } from './cloudevents-sink.js';
import { RequestLogger } from './request-log.js';
import { sendPortRefusal } from './port-refusal.js';
import { RoutingTable } from './routing-table.js';
import { GatewayTracing } from './tracing.js';
import { TrafficSplitter } from './traffic-split.js';
import { UpstreamClient } from './upstream.js';
import { gatewaySettings, type GatewaySettings, type GatewaySettingsInput } from './settings.js';

/** The gateway's settings (settings.ts: any left out take their defaults) and what is not a setting. */
export type GatewayOptions = GatewaySettingsInput & {
  readonly client: KubeClient;
  readonly log: Logger;
  /**
   * The port's certificate: TLS with HTTP/1.1 and HTTP/2 (REST and gRPC on one address). Absent = plain HTTP/1.1,
   * REST only: an explicit choice, for a gateway behind a proxy or mesh that terminates TLS.
   */
  readonly tls?: TlsPair | undefined;
};

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

export class GatewayServer {
  readonly app: FastifyInstance;
  readonly context: GatewayContext;
  readonly upstream: UpstreamClient;
  readonly settings: GatewaySettings;
  private readonly stopping = new AbortController();
  private health: RunningHealthServer | undefined;
  private readonly log: Logger;
  private readonly requestLog: RequestLogger;
  private readonly jsonWorkers = new JsonWorkerPool();
  private started = false;

  private constructor(options: GatewayOptions) {
    const settings = gatewaySettings(options);
    this.settings = settings;
    const { client, log } = options;
    this.log = log;
    const informers = new InformerSet(client, log);
    const routing = new RoutingTable(informers, settings.namespaces);
    const auth = GatewayAuth.create(client, settings.auth, log);
    this.context = {
      client,
      informers,
      namespaces: settings.namespaces,
      routing,
      log,
      auth,
      readNamespace: namespaceReader(settings.auth.projectTemplate),
    };
    const outliers = new OutlierDetector(settings.outliers);
    outliers.onEject = (origin, until) => {
      gatewayEjections.inc();
      log.warn({ origin, until: new Date(until).toISOString() }, 'model server endpoint ejected');
    };
    this.upstream = new UpstreamClient({
      timeoutMs: settings.upstreamTimeoutMs,
      connectTimeoutMs: settings.connectTimeoutMs,
      outliers,
    });
    const bodyLimit = settings.bodyLimitBytes;
    const { sink, sinkQueue } = settings.requestLog;
    const requestLog = new RequestLogger(log.child({ component: 'prediction-log' }), {
      payloadLimitBytes: settings.requestLog.payloadLimitBytes,
      maxRecordsPerSecond: settings.requestLog.maxRecordsPerSecond,
      sink:
        sink === undefined
          ? undefined
          : new CloudEventSink({
              url: sink,
              log: log.child({ component: 'request-log-sink' }),
              ...(sinkQueue.maxEvents !== undefined ? { maxQueuedEvents: sinkQueue.maxEvents } : {}),
              ...(sinkQueue.timeoutMs !== undefined ? { timeoutMs: sinkQueue.timeoutMs } : {}),
            }),
    });
    this.requestLog = requestLog;
    const predictions = new PredictionPipeline({
      settings,
      routing,
      splitter: new TrafficSplitter(),
      upstream: this.upstream,
      requestLog,
      tracing: new GatewayTracing(),
      auth,
      readNamespace: this.context.readNamespace,
      log,
      callers: new CallerLimiter(settings.maxCallsPerCaller, settings.maxBodyBytesPerCaller),
      jsonWorkers: this.jsonWorkers,
    });
    const lookup = registryLookupSource(this.context, settings.reservedPrefixes);
    const api = writeApiMethods({
      client: options.client,
      gate: { auth, readNamespace: this.context.readNamespace, writesEnabled: settings.apiWrites },
      routing,
    });
    const grpc = grpcHandler({
      predictions,
      bodyLimit,
      reads: { endpoints: this.context, registry: { source: lookup, auth } },
      api,
      log,
    });
    const dispatch = (req: AnyRequest, res: AnyResponse, fastifyHandler: RequestHandler, awaitingContinue: boolean) => {
      const grpcCall = isGrpcRequest(req);
      countInFlight(grpcCall ? 'grpc' : 'rest', res);
      if (grpcCall) return grpc(req, res);
      if (isPredictionRequest(req.method, req.url)) {
        serveRest(predictions, req, res, awaitingContinue).catch((err: unknown) =>
          log.error({ err }, 'prediction call failed after its answer'),
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
      // While the port drains (http/drain.ts) its calls are served and told `Connection: close`; fastify's own
      // closing answer is a body no Google client can read (`{"error": "Service Unavailable"}`: the Python SDK's
      // error mapping fails on it, and its operation wait died across a gateway restart instead of retrying).
      return503OnClosing: false,
      genReqId: requestIdOf,
      requestIdHeader: false,
      serverFactory: (handler) =>
        createServer({
          limits: settings.serverLimits,
          tls: options.tls,
          front: { refuse: sendPortRefusal },
          onRequest: (req, res) => dispatch(req, res, handler as RequestHandler, false),
          // `Expect: 100-continue` (curl sends it for large bodies): a prediction call is admitted before the
          // client is told to send its body, so a refused one costs no body at all (RFC 9110 §10.1.1).
          onCheckContinue: (req, res) => dispatch(req, res, handler as RequestHandler, true),
          drainMs: settings.shutdownDrainMs,
          onTlsError: (peer, err) =>
            log.warn({ client: peer, err: err.message }, 'a client failed its TLS handshake with the gateway'),
        }) as http.Server,
    });
    installErrorAnswerer(this.app, { log, bodyLimit });
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
    const { health, listen, namespaces } = this.settings;
    if (health !== undefined && health.port >= 0) {
      this.health = await startHealthServer({
        port: health.port,
        host: health.host,
        checks,
        guardMetrics: (req) => this.context.auth.guardMetrics(req),
        log: this.log,
      });
    }
    // Serving before the caches are complete would answer NOT_FOUND for endpoints that exist.
    if (!(await informers.waitForSync(this.stopping.signal)))
      throw new Error('gateway stopped before its caches synced');
    await this.app.listen({ host: listen.host, port: listen.port });
    const port = (this.app.server.address() as AddressInfo).port;
    const healthPort = this.health?.port;
    this.log.info({ port, healthPort, namespaces }, 'gateway serving');
    return { port, healthPort };
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
