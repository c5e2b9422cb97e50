/**
 * The read-only gRPC methods whose REST twins are the gateway's fastify routes, served by the same functions those
 * routes call (authentication and authorisation included), so a method has one implementation and answers the
 * same over both transports:
 *
 *   EndpointService.GetEndpoint     ↔ GET  /v1/{name}                                   (endpoints/routes.ts getEndpoint)
 *   EndpointService.ListEndpoints   ↔ GET  /v1/{parent}/endpoints?filter&pageSize&pageToken  (listEndpoints)
 *   LookupService.ResolveService    ↔ POST /v1/{name}:resolve {maxEndpoints, endpointFilter} (registry/lookup.ts)
 *
 * EndpointService's writes are API methods (../writes/endpoints/), served over both transports by ../writes/write-api.ts.
 */
import type { DescMessage, DescMethodUnary, DescService, JsonValue } from '@bufbuild/protobuf';
import type { ConnectRouter, HandlerContext } from '@connectrpc/connect';
import { guardLookup, type ServiceOwners } from '../auth/registry-hook.js';
import { getEndpoint, listEndpoints, type EndpointRoutesContext } from '../endpoints/routes.js';
import { GoogleApiError } from '../google-errors.js';
import { resolveService, type RegistryLookupSource } from '../registry/lookup.js';
import { EndpointService, LookupService, messageFromJson } from './services.js';

export interface ReadServicesContext {
  readonly endpoints: EndpointRoutesContext;
  readonly registry: {
    readonly source: RegistryLookupSource & ServiceOwners;
    readonly auth: Parameters<typeof guardLookup>[0];
  };
}

type Unary = DescMethodUnary<DescMessage, DescMessage>;

function unary(service: DescService, name: string): Unary {
  const found = service.methods.find((m) => m.name === name);
  if (found === undefined || found.methodKind !== 'unary') throw new Error(`${service.typeName} has no unary ${name}`);
  return found as Unary;
}

/** A resource name's segments, checked against `pattern` (literal words and `*`). */
export function nameParts(field: string, value: string, pattern: string): string[] {
  const want = pattern.split('/');
  const parts = value.split('/');
  const fits = parts.length === want.length && parts.every((p, i) => (want[i] === '*' ? p !== '' : p === want[i]));
  if (!fits)
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `${field}: invalid value ${JSON.stringify(value.slice(0, 256))}; it must be ${pattern.replace(/\*/g, '{id}')}`,
    );
  return parts;
}

function authorizationOf(ctx: HandlerContext): string | undefined {
  return ctx.requestHeader.get('authorization') ?? undefined;
}

/** The answer as the method's response message: its JSON as the REST answer writes it (undefined fields left out), fields the message does not have dropped. */
function answered(output: DescMessage, value: unknown) {
  return messageFromJson(output, JSON.parse(JSON.stringify(value)) as JsonValue);
}

const ENDPOINT_PATTERN = 'projects/*/locations/*/endpoints/*';
const LOCATION_PATTERN = 'projects/*/locations/*';
const SERVICE_PATTERN = 'projects/*/locations/*/namespaces/*/services/*';

interface GetEndpointRequest {
  readonly name: string;
}
interface ListEndpointsRequest {
  readonly parent: string;
  readonly filter: string;
  readonly pageSize: number;
  readonly pageToken: string;
}
interface ResolveServiceRequest {
  readonly name: string;
  readonly maxEndpoints: number;
  readonly endpointFilter: string;
}

export function readServiceRoutes(context: ReadServicesContext): (router: ConnectRouter) => void {
  return (router) => {
    const get = unary(EndpointService, 'GetEndpoint');
    router.rpc(get, (async (req: GetEndpointRequest, ctx: HandlerContext) => {
      const [, project = '', , location = '', , endpoint = ''] = nameParts('name', req.name, ENDPOINT_PATTERN);
      const found = await getEndpoint(context.endpoints, { project, location, endpoint }, authorizationOf(ctx));
      return answered(get.output, found);
    }) as never);
    const list = unary(EndpointService, 'ListEndpoints');
    router.rpc(list, (async (req: ListEndpointsRequest, ctx: HandlerContext) => {
      const [, project = '', , location = ''] = nameParts('parent', req.parent, LOCATION_PATTERN);
      const page = {
        filter: req.filter,
        pageSize: req.pageSize === 0 ? undefined : req.pageSize,
        pageToken: req.pageToken === '' ? undefined : req.pageToken,
      };
      const found = await listEndpoints(context.endpoints, { project, location }, page, authorizationOf(ctx));
      return answered(list.output, found);
    }) as never);
    const resolve = unary(LookupService, 'ResolveService');
    router.rpc(resolve, (async (req: ResolveServiceRequest, ctx: HandlerContext) => {
      nameParts('name', req.name, SERVICE_PATTERN);
      const { source, auth } = context.registry;
      await guardLookup(auth, source, 'resolve', req.name, authorizationOf(ctx));
      const found = resolveService(source, req.name, {
        ...(req.maxEndpoints !== 0 ? { maxEndpoints: req.maxEndpoints } : {}),
        ...(req.endpointFilter !== '' ? { endpointFilter: req.endpointFilter } : {}),
      });
      return answered(resolve.output, found);
    }) as never);
  };
}
