import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SignInContext } from '../context.js';
import { isActive } from '../directory.js';
import { refreshTokenRequest, tokenResponse } from '../dto.js';
import { SignInProblem } from '../problems.js';

export function tokenRoutes(app: FastifyInstance, ctx: SignInContext): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.route({
    method: 'POST',
    url: '/auth/refresh',
    schema: {
      summary:
        'Exchanges a refresh token for a new access token and a new refresh token; a reused refresh token revokes its family.',
      tags: ['tokens'],
      body: refreshTokenRequest,
      response: { 200: tokenResponse },
    },
    config: { problems: ['invalidRefreshToken'] },
    handler: async (request) => {
      const result = await ctx.refreshTokens.rotate(request.body.refreshToken);
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
  });
  routes.route({
    method: 'POST',
    url: '/auth/logout',
    schema: {
      summary:
        'Revokes the refresh-token family of the given refresh token. Always 204, so it reveals nothing about the token.',
      tags: ['tokens'],
      body: refreshTokenRequest,
    },
    handler: async (request, reply) => {
      const session = await ctx.refreshTokens.current(request.body.refreshToken);
      if (session) await ctx.refreshTokens.revoke(session.id, 'Logout');
      return reply.code(204).send();
    },
  });
}
