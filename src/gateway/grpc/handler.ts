/**
 * The gateway's gRPC front door, on the same port and server as REST (the dispatch is by content type:
 * server.ts). Connect (`@connectrpc/connect`) does the framing, deadlines (`grpc-timeout`), message size limits
 * and status trailers for gRPC and gRPC-Web; the services are adapters onto the REST implementations:
 *
 * | service                                            | methods                         | served by                          |
 * |----------------------------------------------------|---------------------------------|------------------------------------|
 * | google.cloud.aiplatform.v1.PredictionService       | Predict, RawPredict, Explain, StreamRawPredict | the prediction pipeline (prediction-service.ts) |
 * | google.cloud.aiplatform.v1.EndpointService         | GetEndpoint, ListEndpoints      | the Endpoint routes' functions (read-services.ts) |
 * | google.cloud.servicedirectory.v1.LookupService     | ResolveService                  | the lookup route's functions (read-services.ts) |
 * | google.cloud.aiplatform.v1.ModelService, google.longrunning.Operations | see ../writes/write-api.ts | the API methods' functions (api-methods.ts) |
 *
 * Anything else is UNIMPLEMENTED: other methods of these services (EndpointService's writes say to use
 * `kubectl apply`), and unknown services or methods.
 */
import { randomUUID } from 'node:crypto';
import type { Http2ServerResponse } from 'node:http2';
import { Code, ConnectError, createConnectRouter, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerResponse } from '@connectrpc/connect/protocol';
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import type { AnyRequest, AnyResponse } from '../../http/server.js';
import { reportServerError, type ErrorLog } from '../../http/server-errors.js';
import { GoogleApiError } from '../google-errors.js';
import type { PredictionPipeline } from '../prediction/pipeline.js';
import { contextValuesOf, requestIdOfCall } from './context.js';
import { predictionServiceRoutes, predictionUnaryRoutes } from './prediction-service.js';
import { readServiceRoutes, type ReadServicesContext } from './read-services.js';
import { apiMethodRoutes } from './api-methods.js';
import type { ApiMethod } from '../writes/api-method.js';
import { toConnectError } from './status.js';
import { isPlainGrpcUnary, serveUnary, type UnaryOptions } from './unary.js';

const GRPC_CONTENT_TYPE = /^application\/grpc(?:-web(?:-text)?)?(?:[+;]|$)/i;

export function isGrpcRequest(req: AnyRequest): boolean {
  const type = req.headers['content-type'];
  return req.method === 'POST' && typeof type === 'string' && GRPC_CONTENT_TYPE.test(type);
}

export interface GrpcOptions {
  readonly predictions: PredictionPipeline;
  /** The largest request message, as REST's body limit (RESOURCE_EXHAUSTED beyond). */
  readonly bodyLimit: number;
  /** What EndpointService's reads and LookupService.ResolveService read (read-services.ts). */
  readonly reads: ReadServicesContext;
  /** Vertex's write API and google.longrunning.Operations (../writes/write-api.ts), served as REST serves them. */
  readonly api: readonly ApiMethod[];
  readonly log: ErrorLog;
}

/**
 * gRPC's `grpc-message` is percent-encoded only outside printable ASCII and for `%` itself (gRPC over HTTP/2,
 * "Responses"); Connect encodes it as a URI component, and grpc-js decodes with decodeURI, so a message with `:`
 * or `,` reached Node clients as `%3A` and `%2C`. Python's and Go's clients decode either.
 */
export function grpcMessageEncoding(message: string): string {
  return Array.from(Buffer.from(message, 'utf8'))
    .map((byte) =>
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/**
 * A status trailer made to say what gRPC's clients expect: the message encoded as the spec says (above), and a
 * message the server could not parse answered INVALID_ARGUMENT, as Google's servers (and this gateway's REST
 * surface) answer a malformed request, where Connect says INTERNAL ("parse binary: ...").
 */
export function conformTrailer(trailer: Headers): void {
  const encoded = trailer.get('grpc-message');
  if (encoded === null) return;
  const message = decodeURIComponent(encoded);
  if (trailer.get('grpc-status') === String(Code.Internal) && /^parse (binary|json)/.test(message))
    trailer.set('grpc-status', String(Code.InvalidArgument));
  trailer.set('grpc-message', grpcMessageEncoding(message));
}

/** The trailers Connect writes, conformed (conformTrailer), a streaming answer's once its last message is sent. */
function conformingTrailers(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const { trailer, body } = res;
    if (trailer === undefined) return res;
    if (body === undefined || !(Symbol.asyncIterator in body)) {
      conformTrailer(trailer);
      return res;
    }
    async function* passThrough(): AsyncIterable<Uint8Array> {
      try {
        yield* body as AsyncIterable<Uint8Array>;
      } finally {
        conformTrailer(trailer as Headers);
      }
    }
    return { ...res, body: passThrough() };
  };
  return Object.assign(wrapped, handler);
}

/**
 * A handler's failure as its status: a GoogleApiError (a refusal made before the pipeline or the REST route ran,
 * such as a malformed resource name) keeps its code; anything else is INTERNAL, reported once (logged and counted
 * as every 5xx of the process is) and answered without its text.
 */
function statusOf(err: unknown, log: ErrorLog, route: string, requestId: string): ConnectError {
  if (err instanceof GoogleApiError) return toConnectError(err);
  if (err instanceof ConnectError) return err;
  reportServerError(log, { server: 'gateway', route, requestId, status: 500, err });
  return new ConnectError(`Internal error; request id ${requestId}.`, Code.Internal);
}

function statusOfFailures(log: ErrorLog): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw statusOf(err, log, req.method.name, requestIdOfCall(req.contextValues) ?? randomUUID());
    }
  };
}

function unimplemented(req: AnyRequest, res: AnyResponse): void {
  const path = (req.url ?? '').split('?', 1)[0] ?? '';
  const message = `Method not found: ${path.slice(0, 256)} (this gateway serves PredictionService, EndpointService, ModelService, google.longrunning.Operations and LookupService.ResolveService)`;
  res.writeHead(200, {
    'content-type': String(req.headers['content-type']),
    'grpc-status': String(Code.Unimplemented),
    'grpc-message': grpcMessageEncoding(message),
  });
  res.end();
}

export function grpcHandler(options: GrpcOptions): (req: AnyRequest, res: AnyResponse) => void {
  const router = createConnectRouter({
    grpc: true,
    grpcWeb: true,
    connect: false,
    readMaxBytes: options.bodyLimit,
    interceptors: [statusOfFailures(options.log)],
    writeMaxBytes: 64 * 1024 * 1024,
  });
  const unary = predictionUnaryRoutes(options.predictions);
  const routes: ((router: ConnectRouter) => void)[] = [
    predictionServiceRoutes(unary, options.predictions),
    readServiceRoutes(options.reads),
    apiMethodRoutes(options.api),
  ];
  for (const add of routes) add(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, conformingTrailers(h)]));
  const unaryOptions: UnaryOptions = {
    bodyLimit: options.bodyLimit,
    statusOf: (err, method, requestId) => statusOf(err, options.log, method, requestId),
    conform: conformTrailer,
  };
  const direct = new Map(unary.map((route) => [`/${route.method.parent.typeName}/${route.method.name}`, route]));
  return (req, res) => {
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    const route = direct.get(path);
    if (route !== undefined && isPlainGrpcUnary(req)) {
      serveUnary(route, req, res as Http2ServerResponse, unaryOptions).catch((err: unknown) =>
        options.log.error({ err, rpc: route.method.name }, 'a gRPC call failed after its answer began'),
      );
      return;
    }
    const handler = handlers.get(path);
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
