import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SignInContext } from './context.js';
import { isActive, type Identity, type ShopUserEntry } from './directory.js';
import { SignInProblem } from './problems.js';
import type { Audience, VerifiedToken } from './tokens.js';

/** Who is calling a protected route: a signed-in identity, proven by a verified access token of a live session. */
export interface SignedInCaller {
  readonly token: VerifiedToken;
  readonly identity: Identity;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearer-auth plugin's onRequest hook on protected routes; null elsewhere. */
    caller: SignedInCaller | null;
  }
}

/**
 * Authenticates every route registered inside it in an `onRequest` hook, as `@fastify/bearer-auth`
 * does: the token is checked before the body is read, parsed or validated, so an unauthenticated
 * caller learns nothing from 400/413/415 answers. Only access tokens for `audience` pass. The hook is encapsulated (the plugin is not
 * wrapped in fastify-plugin), so routes outside it stay public.
 */
export function bearerAuthPlugin(ctx: SignInContext, audience: Audience) {
  return async function bearerAuth(scope: FastifyInstance): Promise<void> {
    scope.decorateRequest('caller', null);
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, bearer: true };
    });
    scope.addHook('onRequest', async (request) => {
      request.caller = await authenticateRequest(ctx, request, audience);
    });
  };
}

/** The caller of a protected route; null means the route was registered outside the plugin's scope. */
export function signedInCaller(request: FastifyRequest): SignedInCaller {
  if (request.caller === null)
    throw new SignInProblem('missingToken', 'an access token is required in the Authorization header (Bearer)');
  return request.caller;
}

/**
 * RFC 6750: `Authorization: Bearer <token>`, scheme case-insensitive, exactly one header. Node keeps
 * only the first of duplicate Authorization headers, so duplicates are counted in the raw headers.
 */
export function bearerToken(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'authorization') count++;
  if (count > 1) throw new SignInProblem('invalidAuthorizationHeader', 'send exactly one Authorization header');
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  if (!m?.[1]) throw new SignInProblem('invalidToken', 'the Authorization header must be "Bearer <access token>"');
  return m[1];
}

/**
 * The caller behind the access token, re-checked on every request against the directory (a disabled
 * or deleted user loses access at once) and against the session family (logout and refresh-token
 * reuse end every access token of the family at once, on every replica).
 */
async function authenticateRequest(
  ctx: SignInContext,
  request: FastifyRequest,
  audience: Audience,
): Promise<SignedInCaller> {
  const raw = bearerToken(request);
  if (raw === undefined)
    throw new SignInProblem('missingToken', 'an access token is required in the Authorization header (Bearer)');
  const token = await ctx.tokens.verifyAccessToken(raw, audience);
  if (!token)
    throw new SignInProblem(
      'invalidToken',
      `the access token is invalid, expired, or not for this API (aud ${audience})`,
    );
  if (ctx.sessions.isRevoked(token.sessionId))
    throw new SignInProblem(
      'invalidToken',
      'the session of this access token has ended (logout or refresh-token reuse); sign in again',
    );
  const identity = ctx.directory.identity(token.subject);
  if (!identity || !isActive(identity))
    throw new SignInProblem('invalidToken', 'the account of this token no longer exists or is disabled');
  return { token, identity };
}

/** The caller as a shop user (only shop users get `pos` tokens; an AdminUser here would be a bug, refused as a role). */
export function shopUserOf(caller: SignedInCaller): ShopUserEntry {
  if (caller.identity.kind !== 'ShopUser')
    throw new SignInProblem('forbiddenRole', 'only shop users can use the point of sale');
  return caller.identity;
}
