import type { FastifyReply } from 'fastify';
import type { FieldError } from '../api/common/field-error.js';

/**
 * The catalogue of sign-in errors as RFC 9457 problem details. Every `type` is a stable URN a
 * client can branch on; `title` never varies for a given type, `detail` explains this occurrence.
 */
export const ProblemTypes = {
  invalidRequest: {
    type: 'urn:endpoint-operator:signin:invalid-request',
    title: 'The request is invalid',
    status: 400,
  },
  invalidShopHeader: {
    type: 'urn:endpoint-operator:signin:invalid-shop-header',
    title: 'X-Shop-Id is missing or malformed',
    status: 400,
  },
  invalidAuthorizationHeader: {
    type: 'urn:endpoint-operator:signin:invalid-authorization-header',
    title: 'The Authorization header is malformed or repeated',
    status: 400,
  },
  invalidCredentials: {
    type: 'urn:endpoint-operator:signin:invalid-credentials',
    title: 'Invalid email or password',
    status: 401,
  },
  missingToken: {
    type: 'urn:endpoint-operator:signin:missing-token',
    title: 'An access token is required',
    status: 401,
  },
  invalidToken: {
    type: 'urn:endpoint-operator:signin:invalid-token',
    title: 'The token is missing, invalid or expired',
    status: 401,
  },
  invalidRefreshToken: {
    type: 'urn:endpoint-operator:signin:invalid-refresh-token',
    title: 'The refresh token is invalid, expired or revoked',
    status: 401,
  },
  invalidSessionToken: {
    type: 'urn:endpoint-operator:signin:invalid-session-token',
    title: 'The session token is invalid, expired or already used',
    status: 401,
  },
  notAttachedToShop: {
    type: 'urn:endpoint-operator:signin:not-attached-to-shop',
    title: 'The user is not attached to this shop',
    status: 403,
  },
  noShop: { type: 'urn:endpoint-operator:signin:no-shop', title: 'The user is not attached to any shop', status: 403 },
  forbiddenRole: {
    type: 'urn:endpoint-operator:signin:forbidden-role',
    title: 'The user has no role allowed to use this sign-in',
    status: 403,
  },
  notFound: { type: 'urn:endpoint-operator:signin:not-found', title: 'No such route', status: 404 },
  methodNotAllowed: {
    type: 'urn:endpoint-operator:signin:method-not-allowed',
    title: 'The method is not allowed on this route',
    status: 405,
  },
  unsupportedMediaType: {
    type: 'urn:endpoint-operator:signin:unsupported-media-type',
    title: 'The body must be application/json',
    status: 415,
  },
  payloadTooLarge: {
    type: 'urn:endpoint-operator:signin:payload-too-large',
    title: 'The request body is too large',
    status: 413,
  },
  requestTimeout: {
    type: 'urn:endpoint-operator:signin:request-timeout',
    title: 'The request did not arrive in time',
    status: 408,
  },
  headersTooLarge: {
    type: 'urn:endpoint-operator:signin:headers-too-large',
    title: 'The request headers are too large',
    status: 431,
  },
  tooManyAttempts: {
    type: 'urn:endpoint-operator:signin:too-many-attempts',
    title: 'Too many failed sign-in attempts',
    status: 429,
  },
  unavailable: {
    type: 'urn:endpoint-operator:signin:unavailable',
    title: 'The sign-in service is temporarily unavailable',
    status: 503,
  },
  internal: { type: 'urn:endpoint-operator:signin:internal', title: 'Internal error', status: 500 },
} as const;
export type ProblemKind = keyof typeof ProblemTypes;

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: { field: string; detail: string }[];
}

/** Thrown by handlers and turned into a problem+json reply by the server's error handler. */
export class SignInProblem extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extra: { retryAfterSeconds?: number; fieldErrors?: readonly FieldError[]; cause?: unknown } = {},
  ) {
    super(`${ProblemTypes[kind].title}: ${detail}`, extra.cause === undefined ? undefined : { cause: extra.cause });
  }
}

export function problemBody(
  kind: ProblemKind,
  detail: string,
  instance?: string,
  fieldErrors?: readonly FieldError[],
): ProblemBody {
  const t = ProblemTypes[kind];
  return {
    type: t.type,
    title: t.title,
    status: t.status,
    detail,
    ...(instance === undefined ? {} : { instance }),
    ...(fieldErrors === undefined ? {} : { errors: fieldErrors.map((e) => ({ field: e.field, detail: e.detail })) }),
  };
}

const BEARER_CHALLENGES: Partial<Record<ProblemKind, string>> = {
  missingToken: '',
  invalidToken: 'invalid_token',
  invalidAuthorizationHeader: 'invalid_request',
};

/** Whether answers of this kind carry a `WWW-Authenticate: Bearer` challenge (documented in /openapi.json). */
export function hasBearerChallenge(kind: ProblemKind): boolean {
  return BEARER_CHALLENGES[kind] !== undefined;
}

export function sendProblem(reply: FastifyReply, problem: SignInProblem, instance?: string): FastifyReply {
  const body = problemBody(problem.kind, problem.detail, instance, problem.extra.fieldErrors);
  reply.code(body.status).type('application/problem+json');
  // RFC 6750 §3: a protected resource answers a missing or bad token with a Bearer challenge; §3.1:
  // a request without credentials gets no error code, a bad token `invalid_token`, a malformed
  // request `invalid_request`.
  const challenge = BEARER_CHALLENGES[problem.kind];
  if (challenge !== undefined) {
    reply.header(
      'WWW-Authenticate',
      challenge === ''
        ? 'Bearer realm="pos"'
        : `Bearer realm="pos", error="${challenge}", error_description="${problem.detail.replace(/["\\]/g, '')}"`,
    );
  }
  if (problem.extra.retryAfterSeconds !== undefined)
    reply.header('Retry-After', String(Math.max(1, Math.ceil(problem.extra.retryAfterSeconds))));
  return reply.send(JSON.stringify(body));
}
