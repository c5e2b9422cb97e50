/**
 * Vertex AI's Endpoint reads over REST, as a gateway plugin (gRPC's EndpointService reaches the same routes:
 * ../grpc/rest-bridge.ts):
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

export async function endpointRoutes(app: FastifyInstance, ctx: EndpointRoutesContext): Promise<void> {
  const { routing, auth } = ctx;
  const toVertex = (pe: Parameters<typeof vertexEndpoint>[0]): VertexEndpoint =>
    vertexEndpoint(pe, (name) => routing.deployedModel(pe.metadata.namespace ?? '', name));

  app.get<{ Params: LocationParams & { endpoint: string } }>(
    '/v1/projects/:project/locations/:location/endpoints/:endpoint',
    async (req, reply) => {
      query(req);
      const { project, location, endpoint } = req.params;
      const name = `projects/${project}/locations/${location}/endpoints/${endpoint}`;
      if (endpoint.includes(':')) throw notFound(name);
      const target = predictionTarget(ctx.readNamespace, project, endpoint);
      await auth.checkNamed('getEndpoint', req.headers.authorization, target, name, () => notFound(name));
      const pe = routing.predictionEndpoint(name);
      // With auth on, only the object that was authorised (as the prediction calls: choose-model.ts findEndpoint).
      if (
        pe === undefined ||
        (auth.enabled && (pe.metadata.namespace !== target?.namespace || pe.metadata.name !== target?.name))
      )
        throw notFound(name);
      return reply.header('content-type', JSON_TYPE).send(JSON.stringify(toVertex(pe)));
    },
  );

  app.get<{ Params: LocationParams }>('/v1/projects/:project/locations/:location/endpoints', async (req, reply) => {
    const q = query(req);
    const { project, location } = req.params;
    const parent = `projects/${project}/locations/${location}`;
    const filterText = first(q, 'filter') ?? '';
    const filter = compileEndpointFilter(filterText);
    const page = { filter: filterText, pageSize: pageSizeOf(first(q, 'pageSize')), pageToken: first(q, 'pageToken') };
    checkPageRequest(page);
    const principal = await auth.authenticate('listPredictionEndpoints', req.headers.authorization);
    const namespace = ctx.readNamespace(project);
    if (namespace === undefined) {
      if (auth.enabled) throw auth.deny('listPredictionEndpoints', parent);
      return reply.header('content-type', JSON_TYPE).send('{}');
    }
    await auth.authorize('listPredictionEndpoints', principal, { namespace, name: '' }, parent);
    const prefix = `${parent}/endpoints/`;
    const endpoints = routing
      .predictionEndpoints(namespace)
      .map(toVertex)
      .filter((e) => e.name.startsWith(prefix) && routing.predictionEndpoint(e.name)?.metadata.namespace === namespace)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const { page: found, nextPageToken } = pageOf(endpoints, (e) => e.name, filter, page);
    const out: { endpoints?: VertexEndpoint[]; nextPageToken?: string } = {};
    if (found.length > 0) out.endpoints = found;
    if (nextPageToken !== undefined) out.nextPageToken = nextPageToken;
    return reply.header('content-type', JSON_TYPE).send(JSON.stringify(out));
  });
}
