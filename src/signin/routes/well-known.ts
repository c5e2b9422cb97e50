import type { SignInContext } from '../context.js';
import { jwksResponse } from '../dto.js';
import { noBody, route, type Route } from '../route-kit.js';

export function wellKnownRoutes(ctx: SignInContext): Route[] {
  return [
    route({
      method: 'GET',
      url: '/.well-known/jwks.json',
      summary: 'The public keys that verify access tokens (RFC 7517).',
      tag: 'keys',
      body: noBody,
      response: jwksResponse,
      problems: [],
      handler: async ({ reply }) => {
        reply.header('Cache-Control', 'public, max-age=300');
        return ctx.tokens.publicJwks() as unknown as {
          keys: { kty: string; crv: string; x: string; kid: string; alg: string; use: string }[];
        };
      },
    }),
  ];
}
