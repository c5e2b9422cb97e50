import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authenticate } from '../authenticate.js';
import type { SignInContext } from '../context.js';
import { activeMemberships } from '../directory.js';
import { credentialsRequest, shopUserLoginResponse } from '../dto.js';
import { issueTokenPair } from '../issue-tokens.js';
import { isShopUser, shopUserDetail } from '../mappers.js';
import { SignInProblem } from '../problems.js';

/** The back office is for people who run a shop; cashiers use the point of sale only. */
const BACK_OFFICE_ROLES = new Set(['owner', 'manager']);

export function shopRoutes(app: FastifyInstance, ctx: SignInContext): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: 'POST',
    url: '/auth/shop/login',
    schema: {
      summary: 'Signs a ShopUser in to the back office: allowed for owners and managers, lists the shops they manage.',
      tags: ['shop'],
      body: credentialsRequest,
      response: { 200: shopUserLoginResponse },
    },
    config: { problems: ['invalidCredentials', 'forbiddenRole', 'tooManyAttempts', 'unavailable'] },
    handler: async (request, reply) => {
      const user = await authenticate(ctx, request, reply, request.body, isShopUser);
      const managed = activeMemberships(ctx.directory, user).find((m) => BACK_OFFICE_ROLES.has(m.membership.role));
      if (managed === undefined)
        throw new SignInProblem(
          'forbiddenRole',
          'the back office needs the owner or manager role in at least one shop',
        );
      return {
        ...(await issueTokenPair(ctx, { kind: 'ShopUser', name: user.id }, 'back-office')),
        shopUser: shopUserDetail(user, managed.membership, managed.shop),
      };
    },
  });
}
