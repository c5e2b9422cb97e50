/**
 * The sign-in API's routes are plain fastify routes typed by fastify-type-provider-zod: the body and 200 schemas
 * are the zod DTOs (dto.ts), which validate the request and serialise the answer (zod drops any field a DTO does
 * not declare, so an internal field never leaks). What fastify's route options cannot say lives in the route's
 * `config` (the problems it answers, the X-Shop-Id header); the bearer-auth plugin marks the routes of its scope.
 * `collectRoutes` reads every route back as it is registered: /openapi.json (openapi.ts) and the tests use that table.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { z } from 'zod';
import type { ProblemKind } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Problems of this route beyond those of every body route and every protected route. */
    problems?: readonly ProblemKind[];
    /** Requires the `X-Shop-Id` header (checked by the handler, so documented here rather than in the schema). */
    shopHeader?: boolean;
    /** Set by the bearer-auth plugin on the routes of its scope. */
    bearer?: boolean;
  }
}

/** What /openapi.json and the tests know about a route. */
export interface RouteInfo {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  /** Requires `Authorization: Bearer <access token>`, checked by the bearer-auth plugin before the body is read. */
  readonly bearer: boolean;
  readonly shopHeader: boolean;
  readonly body: z.ZodType | undefined;
  /** Undefined for 204 No Content. */
  readonly response: z.ZodType | undefined;
  readonly problems: readonly ProblemKind[];
}

export interface Route {
  readonly info: RouteInfo;
}

/** Answers every route with a body can give, and every protected route: documented without being listed per route. */
const BODY_PROBLEMS: readonly ProblemKind[] = ['invalidRequest', 'payloadTooLarge', 'unsupportedMediaType'];
const BEARER_PROBLEMS: readonly ProblemKind[] = ['missingToken', 'invalidToken', 'invalidAuthorizationHeader'];

/** The route as documented; undefined for routes outside the API's table (HEAD twins, /openapi.json). */
export function routeInfoOf(route: Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>): RouteInfo | undefined {
  const method = route.method === 'GET' ? 'GET' : route.method === 'POST' ? 'POST' : undefined;
  if (method === undefined || route.schema?.hide === true) return undefined;
  const body = route.schema?.body as z.ZodType | undefined;
  const response = (route.schema?.response as Record<string, z.ZodType> | undefined)?.['200'];
  const bearer = route.config?.bearer === true;
  return {
    method,
    url: route.url,
    bearer,
    shopHeader: route.config?.shopHeader === true,
    body,
    response,
    problems: [
      ...new Set([
        ...(body === undefined ? [] : BODY_PROBLEMS),
        ...(bearer ? BEARER_PROBLEMS : []),
        ...(route.config?.problems ?? []),
      ]),
    ],
  };
}

/**
 * Every API route registered on `app` from now on, in registration order, as the returned function finds them
 * (call it once registration is done: hooks of inner scopes, such as bearer-auth's, run after this one).
 */
export function collectRoutes(app: FastifyInstance): () => Route[] {
  const registered: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    registered.push(route);
  });
  return () =>
    registered.flatMap((route) => {
      const info = routeInfoOf(route);
      return info === undefined ? [] : [{ info }];
    });
}
