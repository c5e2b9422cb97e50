import type { SignInContext } from '../context.js';
import { isActive } from '../directory.js';
import { refreshTokenRequest, tokenResponse } from '../dto.js';
import { SignInProblem } from '../problems.js';
import { route, type Route } from '../route-kit.js';

export function tokenRoutes(ctx: SignInContext): Route[] {
  return [
    route({
      method: 'POST',
      url: '/auth/refresh',
      summary:
        'Exchanges a refresh token for a new access token and a new refresh token; a reused refresh token revokes its family.',
      tag: 'tokens',
      body: refreshTokenRequest,
      response: tokenResponse,
      problems: ['invalidRefreshToken'],
      handler: async ({ body, request }) => {
        const result = await ctx.refreshTokens.rotate(body.refreshToken);
        if (result.outcome === 'reused') {
          request.log.warn(
            { session: result.session.id, subject: result.session.subject },
            'refresh token reused: session family revoked',
          );
          throw new SignInProblem(
            'invalidRefreshToken',
            'this refresh token was already used; the session is revoked, sign in again',
          );
        }
        if (result.outcome === 'invalid') throw new SignInProblem('invalidRefreshToken', 'sign in again');
        const { session, refreshToken } = result;
        const identity = ctx.directory.identity(session.subject);
        if (!identity || !isActive(identity)) {
          await ctx.refreshTokens.revoke(session.id, 'IdentityRemoved');
          throw new SignInProblem('invalidRefreshToken', 'the account no longer exists or is disabled');
        }
        const accessToken = await ctx.tokens.issueAccessToken(session.subject, session.id, session.audience);
        return {
          accessToken,
          refreshToken,
          tokenType: 'Bearer' as const,
          expiresIn: ctx.tokens.settings.accessTokenTtlSeconds,
        };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/logout',
      summary:
        'Revokes the refresh-token family of the given refresh token. Always 204, so it reveals nothing about the token.',
      tag: 'tokens',
      body: refreshTokenRequest,
      problems: [],
      handler: async ({ body }) => {
        const session = await ctx.refreshTokens.current(body.refreshToken);
        if (session) await ctx.refreshTokens.revoke(session.id, 'Logout');
        return undefined;
      },
    }),
  ];
}
