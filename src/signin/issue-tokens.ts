import type { SignInContext } from './context.js';
import type { TokenResponse } from './dto.js';
import type { Subject } from './tokens.js';

/** Starts a refresh family and signs its first access token. */
export async function issueTokenPair(ctx: SignInContext, subject: Subject): Promise<TokenResponse> {
  const { session, refreshToken } = await ctx.refreshTokens.start(subject);
  const accessToken = await ctx.tokens.issueAccessToken(subject, session.id);
  return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: ctx.tokens.settings.accessTokenTtlSeconds };
}
