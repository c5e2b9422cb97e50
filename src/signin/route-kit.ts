import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { decode } from '../api/common/decode.js';
import { formatFieldError } from '../api/common/field-error.js';
import type { SignedInCaller } from './bearer-auth.js';
import { SignInProblem, type ProblemKind } from './problems.js';

/** What /openapi.json and the tests know about a route. */
export interface RouteInfo {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly summary: string;
  readonly tag: string;
  /** Requires `Authorization: Bearer <access token>`, checked by the bearer-auth plugin before the body is read. */
  readonly bearer: boolean;
  /** Requires the `X-Shop-Id` header. */
  readonly shopHeader: boolean;
  readonly body: z.ZodType | undefined;
  /** Undefined for 204 No Content. */
  readonly response: z.ZodType | undefined;
  readonly problems: readonly ProblemKind[];
}

/** Answers every route with a body can give, and every protected route: documented without being listed per route. */
const BODY_PROBLEMS: readonly ProblemKind[] = ['invalidRequest', 'payloadTooLarge', 'unsupportedMediaType'];
const BEARER_PROBLEMS: readonly ProblemKind[] = ['missingToken', 'invalidToken', 'invalidAuthorizationHeader'];

/** The body schema of a route that takes none (GET): documented as no request body. */
export const noBody = z.undefined();

interface CommonSpec<B, R> {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly summary: string;
  readonly tag: string;
  readonly shopHeader?: boolean;
  readonly body: z.ZodType<B>;
  readonly response?: z.ZodType<R>;
  /** Problems of this route beyond those of every body route and every protected route. */
  readonly problems: readonly ProblemKind[];
}
interface PublicSpec<B, R> extends CommonSpec<B, R> {
  readonly bearer?: false;
  handler(input: { body: B; request: FastifyRequest; reply: FastifyReply }): Promise<R>;
}
interface ProtectedSpec<B, R> extends CommonSpec<B, R> {
  readonly bearer: true;
  handler(input: { body: B; request: FastifyRequest; reply: FastifyReply; caller: SignedInCaller }): Promise<R>;
}
export type RouteSpec<B, R> = PublicSpec<B, R> | ProtectedSpec<B, R>;

/** One route of the API, described once: fastify registers it and /openapi.json documents it. */
export interface Route {
  readonly info: RouteInfo;
  /** Adds the route to `scope`: protected routes go into the bearer-auth plugin's scope. */
  register(scope: FastifyInstance): void;
}

export function route<B, R>(spec: RouteSpec<B, R>): Route {
  const info: RouteInfo = {
    method: spec.method,
    url: spec.url,
    summary: spec.summary,
    tag: spec.tag,
    bearer: spec.bearer === true,
    shopHeader: spec.shopHeader === true,
    body: isNoBody(spec.body) ? undefined : spec.body,
    response: spec.response,
    problems: [
      ...new Set([
        ...(isNoBody(spec.body) ? [] : BODY_PROBLEMS),
        ...(spec.bearer === true ? BEARER_PROBLEMS : []),
        ...spec.problems,
      ]),
    ],
  };
  return { info, register: (scope) => registerRoute(scope, spec) };
}

function isNoBody(schema: z.ZodType): boolean {
  return schema === noBody;
}

export function jsonSchemaOf(schema: z.ZodType, target: 'draft-7' | 'openapi-3.0'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target,
    io: 'output',
    reused: 'inline',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
}

function registerRoute<B, R>(scope: FastifyInstance, spec: RouteSpec<B, R>): void {
  // The response schema lets fastify serialise with fast-json-stringify, which also drops any field
  // the DTO does not declare, so an internal field can never leak into a response.
  const response = spec.response ? { 200: jsonSchemaOf(spec.response, 'draft-7') } : undefined;
  scope.route({
    method: spec.method,
    url: spec.url,
    ...(response ? { schema: { response } } : {}),
    handler: async (request, reply) => {
      const body = decodeBody(spec.body, request.body);
      if (spec.bearer === true) {
        // The plugin's onRequest hook set it or answered 401; null means the route was registered outside the plugin.
        const caller = request.caller;
        if (caller === null)
          throw new SignInProblem('missingToken', 'an access token is required in the Authorization header (Bearer)');
        await spec.handler({ body, request, reply, caller }).then((result) => send(reply, spec.response, result));
        return reply;
      }
      send(reply, spec.response, await spec.handler({ body, request, reply }));
      return reply;
    },
  });
}

function send<R>(reply: FastifyReply, schema: z.ZodType<R> | undefined, result: R): void {
  if (!schema) reply.code(204).send();
  else reply.code(200).send(result);
}

function decodeBody<B>(schema: z.ZodType<B>, raw: unknown): B {
  try {
    const parsed = schema.safeParse(raw ?? undefined);
    if (parsed.success) return parsed.data;
  } catch {
    // zod can throw on exotic values; decode() below turns that into a field error
  }
  const { errors } = decode(schema, raw ?? undefined);
  throw new SignInProblem(
    'invalidRequest',
    errors.map((e) => formatFieldError({ ...e, value: redactValue(e.field, e.value) })).join('; ') ||
      'a JSON object body is required',
    { fieldErrors: errors },
  );
}

/** Error messages name the field but never echo a password or token back (nor a whole body, which may hold one). */
function redactValue(field: string, value: unknown): unknown {
  return field === '' || /password|token/i.test(field) ? '[REDACTED]' : value;
}
