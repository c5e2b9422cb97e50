import type { SignInContext } from './context.js';
import type { TokenResponse } from './dto.js';
import type { Audience, Subject } from './tokens.js';

/** Starts a refresh family and signs its first access token. */
export async function issueTokenPair(ctx: SignInContext, subject: Subject, audience: Audience): Promise<TokenResponse> {
  const { session, refreshToken } = await ctx.refreshTokens.start(subject, audience);
  const accessToken = await ctx.tokens.issueAccessToken(subject, session.id, audience);
  return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: ctx.tokens.settings.accessTokenTtlSeconds };
}
