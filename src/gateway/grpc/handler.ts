/**
 * The gateway's gRPC front door, on the same port and server as REST (the dispatch is by content type:
 * server.ts). Connect (`@connectrpc/connect`) does the framing, deadlines (`grpc-timeout`), message size limits
 * and status trailers for gRPC and gRPC-Web; the services are adapters onto the REST implementations:
 *
 * | service                                            | methods                         | served by                          |
 * |----------------------------------------------------|---------------------------------|------------------------------------|
 * | google.cloud.aiplatform.v1.PredictionService       | Predict, RawPredict, Explain, StreamRawPredict | the prediction pipeline (prediction-service.ts) |
 * | google.cloud.aiplatform.v1.EndpointService         | GetEndpoint, ListEndpoints      | the Endpoint REST routes (rest-bridge.ts) |
 * | google.cloud.servicedirectory.v1.LookupService     | ResolveService                  | the lookup REST route (rest-bridge.ts) |
 *
 * Anything else is UNIMPLEMENTED: other methods of these services (EndpointService's writes say to use
 * `kubectl apply`), and unknown services or methods.
 */
import type { ConnectRouter } from '@connectrpc/connect';
import { Code, ConnectError, createConnectRouter } from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerResponse } from '@connectrpc/connect/protocol';
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import type { AnyRequest, AnyResponse } from '../../http/server.js';
import type { Logger } from '../../runtime/logger.js';
import type { PredictionPipeline } from '../prediction/pipeline.js';
import { contextValuesOf } from './context.js';
import { predictionServiceRoutes } from './prediction-service.js';
import { restBridgeRoutes, type Inject } from './rest-bridge.js';

const GRPC_CONTENT_TYPE = /^application\/grpc(?:-web(?:-text)?)?(?:[+;]|$)/i;

export function isGrpcRequest(req: AnyRequest): boolean {
  const type = req.headers['content-type'];
  return req.method === 'POST' && typeof type === 'string' && GRPC_CONTENT_TYPE.test(type);
}

export interface GrpcOptions {
  readonly predictions: PredictionPipeline;
  /** The largest request message, as REST's body limit (RESOURCE_EXHAUSTED beyond). */
  readonly bodyLimit: number;
  /** Runs a request through the gateway's own fastify routes (rest-bridge.ts). */
  readonly inject: Inject;
  readonly log: Pick<Logger, 'error'>;
}

/**
 * Connect answers a message it cannot parse INTERNAL ("parse binary: ..."); that is the caller's fault, and
 * Google's servers (and this gateway's REST surface) answer a malformed request INVALID_ARGUMENT.
 */
function parseFailuresAsInvalidArgument(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const { trailer, body } = res;
    if (trailer === undefined || body === undefined || !(Symbol.asyncIterator in body)) return res;
    const rewrite = (): void => {
      if (
        trailer.get('grpc-status') === String(Code.Internal) &&
        /^parse (binary|json)/.test(decodeURIComponent(trailer.get('grpc-message') ?? ''))
      )
        trailer.set('grpc-status', String(Code.InvalidArgument));
    };
    async function* passThrough(): AsyncIterable<Uint8Array> {
      try {
        yield* body as AsyncIterable<Uint8Array>;
      } finally {
        rewrite();
      }
    }
    return { ...res, body: passThrough() };
  };
  return Object.assign(wrapped, handler);
}

function unimplemented(req: AnyRequest, res: AnyResponse): void {
  const path = (req.url ?? '').split('?', 1)[0] ?? '';
  const message = `Method not found: ${path.slice(0, 256)} (this gateway serves PredictionService, EndpointService's reads and LookupService.ResolveService)`;
  res.writeHead(200, {
    'content-type': String(req.headers['content-type']),
    'grpc-status': String(Code.Unimplemented),
    'grpc-message': encodeURIComponent(message),
  });
  res.end();
}

export function grpcHandler(options: GrpcOptions): (req: AnyRequest, res: AnyResponse) => void {
  const router = createConnectRouter({
    grpc: true,
    grpcWeb: true,
    connect: false,
    readMaxBytes: options.bodyLimit,
    writeMaxBytes: 64 * 1024 * 1024,
  });
  const routes: ((router: ConnectRouter) => void)[] = [
    predictionServiceRoutes(options.predictions),
    restBridgeRoutes(options.inject),
  ];
  for (const add of routes) add(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, parseFailuresAsInvalidArgument(h)]));
  return (req, res) => {
    const handler = handlers.get((req.url ?? '').split('?', 1)[0] ?? '');
    if (handler === undefined) return unimplemented(req, res);
    const universal = universalRequestFromNodeRequest(req, res, undefined, contextValuesOf(req));
    handler(universal)
      .then((answer) => universalResponseToNodeResponse(answer, res))
      .catch((err: unknown) => {
        if (ConnectError.from(err).code === Code.Aborted) return;
        options.log.error({ err, rpc: handler.method.name }, 'a gRPC call failed after its answer began');
      });
  };
}
