import { z } from 'zod';
import { dtoRegistry } from './dto.js';
import { hasBearerChallenge, ProblemTypes } from './problems.js';
import { jsonSchemaOf, type Route } from './route-kit.js';

const COMPONENTS = '#/components/schemas/';

/** Every named DTO as an OpenAPI component; nested named DTOs become `$ref`s. */
function components(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(dtoRegistry, {
    target: 'openapi-3.0',
    io: 'output',
    uri: (id) => `${COMPONENTS}${id}`,
  });
  const out: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $id: _id, $schema: _schema, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}

/** A `$ref` to the schema's component when it is named, else the schema inline. */
function schemaRef(schema: z.ZodType): Record<string, unknown> {
  const id = dtoRegistry.get(schema)?.id;
  if (id === undefined) return jsonSchemaOf(schema, 'openapi-3.0');
  return { $ref: `${COMPONENTS}${id}` };
}

/** The OpenAPI 3.0 document of the API, generated from the same route table fastify serves. */
export function openApiDocument(routes: readonly Route[], version = '0.1.0'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const problem = { $ref: `${COMPONENTS}Problem` };
  for (const { info: r } of routes) {
    const responses: Record<string, unknown> = r.response
      ? { '200': { description: 'OK', content: { 'application/json': { schema: schemaRef(r.response) } } } }
      : { '204': { description: 'No Content' } };
    for (const kind of r.problems) {
      const t = ProblemTypes[kind];
      const key = String(t.status);
      const previous = (responses[key] as { description?: string } | undefined)?.description;
      responses[key] = {
        description: previous ? `${previous}; ${t.title} (${t.type})` : `${t.title} (${t.type})`,
        content: { 'application/problem+json': { schema: problem } },
        ...(t.status === 429
          ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds to wait' } } }
          : {}),
        ...(hasBearerChallenge(kind)
          ? {
              headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'RFC 6750 Bearer challenge' } },
            }
          : {}),
      };
    }
    const parameters = r.shopHeader
      ? [
          {
            name: 'X-Shop-Id',
            in: 'header',
            required: true,
            description: 'id of the shop the till works in',
            schema: { type: 'string', maxLength: 253 },
          },
        ]
      : [];
    paths[r.url] = {
      ...paths[r.url],
      [r.method.toLowerCase()]: {
        summary: r.summary,
        tags: [r.tag],
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(r.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: schemaRef(r.body) } } } }
          : {}),
        ...(r.bearer ? { security: [{ bearer: [] }] } : {}),
        responses,
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'endpoint-operator point-of-sale sign-in',
      version,
      description:
        'Shops and users are Kubernetes resources (pos.endpoint-operator.dev/v1); errors are RFC 9457 problem details.',
    },
    paths,
    components: {
      schemas: components(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
