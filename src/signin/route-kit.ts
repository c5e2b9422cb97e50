import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { decode } from '../api/common/decode.js';
import { formatFieldError } from '../api/common/field-error.js';
import { SignInProblem, type ProblemKind } from './problems.js';

/** One route of the API, described once: fastify registers it and /openapi.json documents it. */
export interface RouteSpec<B = unknown, R = unknown> {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly summary: string;
  readonly tag: string;
  /** Requires `Authorization: Bearer <access token>`. */
  readonly bearer?: boolean;
  /** Requires the `X-Shop-Id` header. */
  readonly shopHeader?: boolean;
  readonly body?: z.ZodType<B>;
  /** Undefined for 204 No Content. */
  readonly response?: z.ZodType<R>;
  readonly problems: readonly ProblemKind[];
  handler(input: { body: B; request: FastifyRequest; reply: FastifyReply }): Promise<R>;
}

/** Erases the type parameters so routes of different shapes share one table. */
export function route<B, R>(spec: RouteSpec<B, R>): RouteSpec {
  return spec as unknown as RouteSpec;
}

export function jsonSchemaOf(schema: z.ZodType, target: 'draft-7' | 'openapi-3.0'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target, io: 'output', reused: 'inline', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

export function registerRoute(app: FastifyInstance, spec: RouteSpec): void {
  // The response schema lets fastify serialise with fast-json-stringify, which also drops any field
  // the DTO does not declare, so an internal field can never leak into a response.
  const response = spec.response ? { 200: jsonSchemaOf(spec.response, 'draft-7') } : undefined;
  app.route({
    method: spec.method,
    url: spec.url,
    ...(response ? { schema: { response } } : {}),
    handler: async (request, reply) => {
      let body: unknown = undefined;
      if (spec.body) {
        const decoded = decode(spec.body, request.body ?? undefined);
        if (decoded.errors.length > 0 || decoded.value === undefined) {
          const errors = decoded.errors.length > 0 ? decoded.errors : [];
          throw new SignInProblem('invalidRequest', errors.map((e) => formatFieldError({ ...e, value: redactValue(e.field, e.value) })).join('; ') || 'a JSON object body is required', { fieldErrors: errors });
        }
        body = decoded.value;
      }
      const result = await spec.handler({ body, request, reply });
      const untyped = reply as FastifyReply;
      if (!spec.response) return untyped.code(204).send();
      return untyped.code(200).send(result);
    },
  });
}

/** Error messages name the field but never echo a password or token back (nor a whole body, which may hold one). */
function redactValue(field: string, value: unknown): unknown {
  return field === '' || /password|token/i.test(field) ? '[REDACTED]' : value;
}
