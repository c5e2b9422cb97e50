import { authenticate } from '../authenticate.js';
import type { SignInContext } from '../context.js';
import { adminLoginResponse, credentialsRequest } from '../dto.js';
import { issueTokenPair } from '../issue-tokens.js';
import { adminUserDto, isAdminUser } from '../mappers.js';
import { route, type Route } from '../route-kit.js';

export function adminRoutes(ctx: SignInContext): Route[] {
  return [
    route({
      method: 'POST',
      url: '/auth/admin/login',
      summary: 'Signs an AdminUser in with email and password.',
      tag: 'admin',
      body: credentialsRequest,
      response: adminLoginResponse,
      problems: ['invalidCredentials', 'tooManyAttempts', 'unavailable'],
      handler: async ({ body, request, reply }) => {
        const admin = await authenticate(ctx, request, reply, body, isAdminUser);
        return {
          ...(await issueTokenPair(ctx, { kind: 'AdminUser', name: admin.id }, 'admin')),
          user: adminUserDto(admin),
        };
      },
    }),
  ];
}
