/**
 * The read-only gRPC methods whose REST twins are fastify routes of the gateway: the gRPC request is run through
 * those routes (fastify's `inject`), hooks included (authentication and authorisation, the error answerer), so a
 * method has one implementation and answers the same over both transports.
 *
 *   EndpointService.GetEndpoint     → GET  /v1/{name}
 *   EndpointService.ListEndpoints   → GET  /v1/{parent}/endpoints?filter&pageSize&pageToken
 *   LookupService.ResolveService    → POST /v1/{name}:resolve {maxEndpoints, endpointFilter}
 *
 * EndpointService's write methods answer UNIMPLEMENTED: endpoints and deployed models are Kubernetes resources here.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { DescMessage, DescMethodUnary, DescService, JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { GoogleApiError } from '../google-errors.js';
import { headersOf } from './context.js';
import { EndpointService, LookupService, messageFromJson, messageToJson } from './services.js';
import { errorOfAnswer, toConnectError } from './status.js';

export type Inject = (request: {
  method: 'GET' | 'POST';
  url: string;
  headers: IncomingHttpHeaders;
  payload?: string;
}) => Promise<{ statusCode: number; payload: string }>;

type Unary = DescMethodUnary<DescMessage, DescMessage>;

function unary(service: DescService, name: string): Unary {
  const found = service.methods.find((m) => m.name === name);
  if (found === undefined || found.methodKind !== 'unary') throw new Error(`${service.typeName} has no unary ${name}`);
  return found as Unary;
}

/** A resource name's REST path, each segment checked against `pattern` (literal words and `*`) and encoded. */
export function namePath(field: string, value: string, pattern: string): string {
  const want = pattern.split('/');
  const parts = value.split('/');
  const fits = parts.length === want.length && parts.every((p, i) => (want[i] === '*' ? p !== '' : p === want[i]));
  if (!fits)
    throw toConnectError(
      new GoogleApiError(
        'INVALID_ARGUMENT',
        `${field}: invalid value ${JSON.stringify(value.slice(0, 256))}; it must be ${pattern.replace(/\*/g, '{id}')}`,
      ),
    );
  return `/v1/${parts.map(encodeURIComponent).join('/')}`;
}

/** Headers for the route: the caller's metadata without gRPC's own and HTTP/2's pseudo-headers. */
function forwardedHeaders(ctx: HandlerContext, contentType?: string): IncomingHttpHeaders {
  const headers = headersOf(ctx.requestHeader);
  for (const name of Object.keys(headers))
    if (
      name.startsWith('grpc-') ||
      name.startsWith(':') ||
      name === 'content-type' ||
      name === 'te' ||
      name === 'content-length'
    )
      delete headers[name];
  if (contentType !== undefined) headers['content-type'] = contentType;
  return headers;
}

function bridged(
  inject: Inject,
  output: DescMessage,
  toRest: (req: Record<string, unknown>) => { method: 'GET' | 'POST'; url: string; payload?: string },
  input: DescMessage,
) {
  return async (req: unknown, ctx: HandlerContext) => {
    const json = messageToJson(input, req) as Record<string, unknown>;
    const rest = toRest(json);
    const answer = await inject({
      ...rest,
      headers: forwardedHeaders(ctx, rest.payload === undefined ? undefined : 'application/json'),
    });
    if (answer.statusCode !== 200) throw toConnectError(errorOfAnswer(answer.statusCode, answer.payload));
    return messageFromJson(output, JSON.parse(answer.payload) as JsonValue);
  };
}

function query(params: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '' && v !== 0) search.set(k, String(v));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

const ENDPOINT_PATTERN = 'projects/*/locations/*/endpoints/*';
const LOCATION_PATTERN = 'projects/*/locations/*';
const SERVICE_PATTERN = 'projects/*/locations/*/namespaces/*/services/*';

export function restBridgeRoutes(inject: Inject): (router: ConnectRouter) => void {
  return (router) => {
    const get = unary(EndpointService, 'GetEndpoint');
    router.rpc(
      get,
      bridged(
        inject,
        get.output,
        (r) => ({ method: 'GET', url: namePath('name', String(r.name ?? ''), ENDPOINT_PATTERN) }),
        get.input,
      ) as never,
    );
    const list = unary(EndpointService, 'ListEndpoints');
    router.rpc(
      list,
      bridged(
        inject,
        list.output,
        (r) => ({
          method: 'GET',
          url:
            namePath('parent', String(r.parent ?? ''), LOCATION_PATTERN) +
            '/endpoints' +
            query({ filter: r.filter, pageSize: r.pageSize, pageToken: r.pageToken }),
        }),
        list.input,
      ) as never,
    );
    const resolve = unary(LookupService, 'ResolveService');
    router.rpc(
      resolve,
      bridged(
        inject,
        resolve.output,
        (r) => ({
          method: 'POST',
          url: `${namePath('name', String(r.name ?? ''), SERVICE_PATTERN)}:resolve`,
          payload: JSON.stringify({ maxEndpoints: r.maxEndpoints, endpointFilter: r.endpointFilter }),
        }),
        resolve.input,
      ) as never,
    );
    for (const method of EndpointService.methods) {
      if (method.name === 'GetEndpoint' || method.name === 'ListEndpoints') continue;
      const refuse = () => {
        throw new ConnectError(
          `EndpointService.${method.name} is not served here: endpoints and deployed models are Kubernetes resources (PredictionEndpoint, DeployedModel); change them with kubectl apply.`,
          Code.Unimplemented,
        );
      };
      router.rpc(method as Unary, (method.methodKind === 'unary' ? async () => refuse() : refuse) as never);
    }
  };
}
