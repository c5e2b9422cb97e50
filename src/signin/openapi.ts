/**
 * /openapi.json, written by @fastify/swagger from the routes fastify serves: fastify-type-provider-zod turns the
 * zod DTOs into schemas (named DTOs of dto.ts become `$ref`s to components), and `documentRoute` adds what the
 * route options leave to `config` (route-table.ts): each problem the route answers, the X-Shop-Id header, and the
 * bearer requirement.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { hasBearerChallenge, ProblemTypes } from './problems.js';
import { routeInfoOf } from './route-table.js';

const PROBLEM = { $ref: '#/components/schemas/Problem' };
const SHOP_HEADER = {
  type: 'object',
  required: ['X-Shop-Id'],
  properties: { 'X-Shop-Id': { type: 'string', maxLength: 253, description: 'id of the shop the till works in' } },
};

const zodTransform = jsonSchemaTransform;
type TransformInput = Parameters<typeof zodTransform>[0] & { route: Parameters<typeof routeInfoOf>[0] };

/** One route's entry: the zod schemas converted, then a response per problem status (several problems share one). */
function documentRoute(input: TransformInput): ReturnType<typeof zodTransform> {
  const { schema, url } = zodTransform(input);
  const info = routeInfoOf(input.route);
  if (info === undefined || schema === undefined) return { schema, url };
  const ok = (schema.response as Record<string, unknown> | undefined)?.['200'];
  const responses: Record<string, unknown> =
    ok === undefined
      ? { 204: { description: 'No Content', type: 'null' } }
      : { 200: { description: 'OK', content: { 'application/json': { schema: ok } } } };
  for (const kind of info.problems) {
    const t = ProblemTypes[kind];
    const key = String(t.status);
    const previous = (responses[key] as { description?: string } | undefined)?.description;
    responses[key] = {
      description: previous ? `${previous}; ${t.title} (${t.type})` : `${t.title} (${t.type})`,
      content: { 'application/problem+json': { schema: PROBLEM } },
      ...(t.status === 429 ? { headers: { 'Retry-After': { type: 'integer', description: 'seconds to wait' } } } : {}),
      ...(hasBearerChallenge(kind)
        ? { headers: { 'WWW-Authenticate': { type: 'string', description: 'RFC 6750 Bearer challenge' } } }
        : {}),
    };
  }
  return {
    schema: {
      ...schema,
      response: responses,
      ...(info.shopHeader ? { headers: SHOP_HEADER } : {}),
      ...(info.bearer ? { security: [{ bearer: [] }] } : {}),
    },
    url,
  };
}

/** Registers the document generator and serves it at /openapi.json (itself not part of the document). */
export async function registerOpenApi(app: FastifyInstance, version = '0.1.0'): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'endpoint-operator point-of-sale sign-in',
        version,
        description:
          'Shops and users are Kubernetes resources (pos.endpoint-operator.dev/v1); errors are RFC 9457 problem details.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    transform: documentRoute as never,
    transformObject: jsonSchemaTransformObject,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
