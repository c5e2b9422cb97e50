import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authenticate } from '../authenticate.js';
import type { SignInContext } from '../context.js';
import { adminLoginResponse, credentialsRequest } from '../dto.js';
import { issueTokenPair } from '../issue-tokens.js';
import { adminUserDto, isAdminUser } from '../mappers.js';

export function adminRoutes(app: FastifyInstance, ctx: SignInContext): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: 'POST',
    url: '/auth/admin/login',
    schema: {
      summary: 'Signs an AdminUser in with email and password.',
      tags: ['admin'],
      body: credentialsRequest,
      response: { 200: adminLoginResponse },
    },
    config: { problems: ['invalidCredentials', 'tooManyAttempts', 'unavailable'] },
    handler: async (request, reply) => {
      const admin = await authenticate(ctx, request, reply, request.body, isAdminUser);
      return {
        ...(await issueTokenPair(ctx, { kind: 'AdminUser', name: admin.id }, 'admin')),
        user: adminUserDto(admin),
      };
    },
  });
}
