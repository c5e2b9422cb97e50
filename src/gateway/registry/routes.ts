/**
 * Service Directory's lookup REST surface as a fastify plugin, mounted by the gateway:
 *   POST /v1/{service name}:resolve            {maxEndpoints, endpointFilter} → {service}
 *   GET  /v1/{service name}                    → Service (without endpoints)
 *   GET  /v1/{service name}/endpoints          ?filter&pageSize&pageToken → {endpoints, nextPageToken}
 * where {service name} is `projects/*\/locations/*\/namespaces/*\/services/*` (a RegistryService's spec.name).
 * The routes sit under `.../namespaces/...`, so they never overlap Vertex AI's `.../endpoints/...` routes
 * on the same gateway. Errors, including fastify's own (bad JSON, wrong content type), leave in Google's
 * JSON error form through this plugin's encapsulated error handler.
 */
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { renderValue } from '../../api/common/field-error.js';
import { userTextInMessage } from '../../api/common/text.js';
import { installJsonBodyParser } from '../../http/fastify-json.js';
import { checkSystemParameters, GoogleApiError } from '../google-errors.js';
import { getService, listEndpoints, resolveServiceText, type RegistryLookupSource } from './lookup.js';

export interface RegistryLookupRoutesOptions {
  readonly source: RegistryLookupSource;
}

/**
 * The service routes, parsed by fastify's router: a service id is one path segment without ':' (find-my-way
 * takes a regular expression per parameter; `::` is a literal ':'). Every other POST or GET under
 * `.../services/` reaches NOT_ROUTED, which answers as Service Directory does.
 */
const SERVICES = '/v1/projects/:project/locations/:location/namespaces/:namespace/services';
const SERVICE_ID = ':service(^[^:/]+$)';
const RESOLVE_ROUTE = `${SERVICES}/${SERVICE_ID}::resolve`;
const SERVICE_ROUTE = `${SERVICES}/${SERVICE_ID}`;
const ENDPOINTS_ROUTE = `${SERVICES}/${SERVICE_ID}/endpoints`;
const NOT_ROUTED = `${SERVICES}/*`;

interface ServicePathParams {
  project: string;
  location: string;
  namespace: string;
  service: string;
}

function serviceName(p: ServicePathParams): string {
  return `projects/${p.project}/locations/${p.location}/namespaces/${p.namespace}/services/${p.service}`;
}

function notRouted(req: FastifyRequest): GoogleApiError {
  return new GoogleApiError(
    'NOT_FOUND',
    `no method ${req.method} ${userTextInMessage(req.url.split('?')[0] ?? '')}; the lookup API serves POST {service}:resolve, GET {service} and GET {service}/endpoints`,
  );
}

/** proto3 JSON: an int32 arrives as a number or a decimal string. */
function int32Field(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^-?[0-9]+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `${field}: invalid value ${renderValue(v)}; it must be a 32-bit integer`,
    );
  }
  return n;
}

function stringField(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw new GoogleApiError('INVALID_ARGUMENT', `${field}: invalid value ${renderValue(v)}; it must be a string`);
  return v;
}

function queryObject(q: unknown): Record<string, unknown> {
  return typeof q === 'object' && q !== null ? (q as Record<string, unknown>) : {};
}

function firstQuery(q: Record<string, unknown>, field: string): unknown {
  const v = q[field];
  return Array.isArray(v) ? v[0] : v;
}

function systemParameters(req: FastifyRequest): void {
  const problem = checkSystemParameters(req.query);
  if (problem !== undefined) throw problem;
}

const plugin: FastifyPluginAsync<RegistryLookupRoutesOptions> = async (app, options) => {
  const { source } = options;
  installJsonBodyParser(app);

  // Service Directory answers a body it cannot read 400 INVALID_ARGUMENT, whatever fastify's own code
  // for the fault; the gateway's error answerer (error-answer.ts, its root handler) answers the rest.
  app.setErrorHandler((err: FastifyError | GoogleApiError) => {
    if (
      !(err instanceof GoogleApiError) &&
      typeof err.statusCode === 'number' &&
      err.statusCode >= 400 &&
      err.statusCode < 500
    )
      throw new GoogleApiError('INVALID_ARGUMENT', err.message);
    throw err;
  });

  app.post<{ Params: ServicePathParams }>(RESOLVE_ROUTE, async (req, reply) => {
    systemParameters(req);
    const body = req.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body))
      throw new GoogleApiError(
        'INVALID_ARGUMENT',
        'the request body must be a JSON object {maxEndpoints, endpointFilter}',
      );
    const fields = body as Record<string, unknown>;
    const maxEndpoints = int32Field(fields, 'maxEndpoints');
    const endpointFilter = stringField(fields, 'endpointFilter');
    const answer = resolveServiceText(source, serviceName(req.params), {
      ...(maxEndpoints !== undefined ? { maxEndpoints } : {}),
      ...(endpointFilter !== undefined ? { endpointFilter } : {}),
    });
    return reply.header('content-type', 'application/json; charset=UTF-8').send(answer);
  });

  app.get<{ Params: ServicePathParams }>(SERVICE_ROUTE, async (req, reply) => {
    systemParameters(req);
    return reply
      .header('content-type', 'application/json; charset=UTF-8')
      .send(getService(source, serviceName(req.params)));
  });

  app.get<{ Params: ServicePathParams }>(ENDPOINTS_ROUTE, async (req, reply) => {
    systemParameters(req);
    const q = queryObject(req.query);
    const filter = stringField({ filter: firstQuery(q, 'filter') }, 'filter');
    const pageSize = int32Field({ pageSize: firstQuery(q, 'pageSize') }, 'pageSize');
    const pageToken = stringField({ pageToken: firstQuery(q, 'pageToken') }, 'pageToken');
    const page = listEndpoints(source, serviceName(req.params), {
      ...(filter !== undefined ? { filter } : {}),
      ...(pageSize !== undefined ? { pageSize } : {}),
      ...(pageToken !== undefined ? { pageToken } : {}),
    });
    return reply.header('content-type', 'application/json; charset=UTF-8').send(page);
  });

  app.route({
    method: ['GET', 'POST'],
    url: NOT_ROUTED,
    handler: async (req) => {
      systemParameters(req);
      throw notRouted(req);
    },
  });
};

/** Registers the lookup routes on `app` (encapsulated: the Google error handler applies to these routes only). */
export async function registryLookupRoutes(app: FastifyInstance, options: RegistryLookupRoutesOptions): Promise<void> {
  await app.register(plugin, options);
}
