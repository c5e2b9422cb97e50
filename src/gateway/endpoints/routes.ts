/**
 * Vertex AI's Endpoint reads over REST, as a gateway plugin; gRPC's EndpointService calls the same two functions
 * (getEndpoint, listEndpoints: ../grpc/read-services.ts):
 *
 *   GET /v1/projects/{p}/locations/{l}/endpoints/{e}                          → Endpoint
 *   GET /v1/projects/{p}/locations/{l}/endpoints?filter&pageSize&pageToken    → {endpoints, nextPageToken}
 *
 * Authorised as `get` on the PredictionEndpoint the name holds, and `list` on predictionendpoints in the
 * project's namespace (the shipped caller role grants both); a name the caller may not read and one that does
 * not exist are answered alike.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkSystemParameters, GoogleApiError } from '../google-errors.js';
import { userTextInMessage } from '../../api/common/text.js';
import type { GatewayAuth } from '../auth/gateway-auth.js';
import { predictionTarget } from '../auth/targets.js';
import { checkPageRequest, pageOf } from '../paging.js';
import type { RoutingTable } from '../routing-table.js';
import { compileEndpointFilter } from './filter.js';
import { vertexEndpoint, type VertexEndpoint } from './vertex-endpoint.js';

export interface EndpointRoutesContext {
  readonly routing: Pick<RoutingTable, 'predictionEndpoint' | 'predictionEndpoints' | 'deployedModel'>;
  readonly auth: Pick<GatewayAuth, 'enabled' | 'authenticate' | 'authorize' | 'checkNamed' | 'deny'>;
  readonly readNamespace: (project: string) => string | undefined;
}

interface LocationParams {
  project: string;
  location: string;
}

const JSON_TYPE = 'application/json; charset=UTF-8';

function notFound(name: string): GoogleApiError {
  return new GoogleApiError('NOT_FOUND', `Endpoint ${userTextInMessage(name)} not found.`);
}

function query(req: FastifyRequest): Record<string, unknown> {
  const problem = checkSystemParameters(req.query);
  if (problem !== undefined) throw problem;
  return typeof req.query === 'object' && req.query !== null ? (req.query as Record<string, unknown>) : {};
}

function first(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === 'string' ? one : undefined;
}

function pageSizeOf(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^-?[0-9]+$/.test(text))
    throw new GoogleApiError('INVALID_ARGUMENT', `pageSize: ${JSON.stringify(text.slice(0, 64))} is not an integer`);
  return Number(text);
}

export interface EndpointName {
  readonly project: string;
  readonly location: string;
  readonly endpoint: string;
}

export interface EndpointsPage {
  readonly filter: string;
  readonly pageSize: number | undefined;
  readonly pageToken: string | undefined;
}

function toVertex(ctx: EndpointRoutesContext, pe: Parameters<typeof vertexEndpoint>[0]): VertexEndpoint {
  return vertexEndpoint(pe, (name) => ctx.routing.deployedModel(pe.metadata.namespace ?? '', name));
}

/** EndpointService.GetEndpoint: the endpoint the name holds, as the caller may read it. */
export async function getEndpoint(
  ctx: EndpointRoutesContext,
  { project, location, endpoint }: EndpointName,
  authorization: string | undefined,
): Promise<VertexEndpoint> {
  const { routing, auth } = ctx;
  const name = `projects/${project}/locations/${location}/endpoints/${endpoint}`;
  if (endpoint.includes(':')) throw notFound(name);
  const target = predictionTarget(ctx.readNamespace, project, endpoint);
  await auth.checkNamed('getEndpoint', authorization, target, name, () => notFound(name));
  const pe = routing.predictionEndpoint(name);
  // With auth on, only the object that was authorised (as the prediction calls: choose-model.ts findEndpoint).
  if (
    pe === undefined ||
    (auth.enabled && (pe.metadata.namespace !== target?.namespace || pe.metadata.name !== target?.name))
  )
    throw notFound(name);
  return toVertex(ctx, pe);
}

/** EndpointService.ListEndpoints: one page of the location's endpoints the filter keeps. */
export async function listEndpoints(
  ctx: EndpointRoutesContext,
  { project, location }: Omit<EndpointName, 'endpoint'>,
  page: EndpointsPage,
  authorization: string | undefined,
): Promise<{ endpoints?: VertexEndpoint[]; nextPageToken?: string }> {
  const { routing, auth } = ctx;
  const parent = `projects/${project}/locations/${location}`;
  const filter = compileEndpointFilter(page.filter);
  checkPageRequest(page);
  const principal = await auth.authenticate('listPredictionEndpoints', authorization);
  const namespace = ctx.readNamespace(project);
  if (namespace === undefined) {
    if (auth.enabled) throw auth.deny('listPredictionEndpoints', parent);
    return {};
  }
  await auth.authorize('listPredictionEndpoints', principal, { namespace, name: '' }, parent);
  const prefix = `${parent}/endpoints/`;
  const endpoints = routing
    .predictionEndpoints(namespace)
    .map((pe) => toVertex(ctx, pe))
    .filter((e) => e.name.startsWith(prefix) && routing.predictionEndpoint(e.name)?.metadata.namespace === namespace)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const { page: found, nextPageToken } = pageOf(endpoints, (e) => e.name, filter, page);
  const out: { endpoints?: VertexEndpoint[]; nextPageToken?: string } = {};
  if (found.length > 0) out.endpoints = found;
  if (nextPageToken !== undefined) out.nextPageToken = nextPageToken;
  return out;
}

export async function endpointRoutes(app: FastifyInstance, ctx: EndpointRoutesContext): Promise<void> {
  app.get<{ Params: LocationParams & { endpoint: string } }>(
    '/v1/projects/:project/locations/:location/endpoints/:endpoint',
    async (req, reply) => {
      query(req);
      const endpoint = await getEndpoint(ctx, req.params, req.headers.authorization);
      return reply.header('content-type', JSON_TYPE).send(JSON.stringify(endpoint));
    },
  );

  app.get<{ Params: LocationParams }>('/v1/projects/:project/locations/:location/endpoints', async (req, reply) => {
    const q = query(req);
    const page = {
      filter: first(q, 'filter') ?? '',
      pageSize: pageSizeOf(first(q, 'pageSize')),
      pageToken: first(q, 'pageToken'),
    };
    const answer = await listEndpoints(ctx, req.params, page, req.headers.authorization);
    return reply.header('content-type', JSON_TYPE).send(JSON.stringify(answer));
  });
}
