import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SignInContext } from '../context.js';
import { jwksResponse } from '../dto.js';

export function wellKnownRoutes(app: FastifyInstance, ctx: SignInContext): void {
  app.withTypeProvider<ZodTypeProvider>().route({
    method: 'GET',
    url: '/.well-known/jwks.json',
    schema: {
      summary: 'The public keys that verify access tokens (RFC 7517).',
      tags: ['keys'],
      response: { 200: jwksResponse },
    },
    handler: async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=300');
      return ctx.tokens.publicJwks() as unknown as {
        keys: { kty: string; crv: string; x: string; kid: string; alg: string; use: string }[];
      };
    },
  });
}
