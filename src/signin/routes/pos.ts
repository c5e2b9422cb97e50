import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { attachedShop, authenticate, isShopId, shopFromHeader } from '../authenticate.js';
import { shopUserOf, signedInCaller } from '../bearer-auth.js';
import type { SignInContext } from '../context.js';
import { activeMemberships, isActive } from '../directory.js';
import {
  credentialsRequest,
  posAuthenticatedResponse,
  posLoginResponse,
  posProfileResponse,
  selectShopRequest,
  switchShopRequest,
  switchShopResponse,
  type PosAuthenticatedResponse,
  type PosLoginResponse,
} from '../dto.js';
import { issueTokenPair } from '../issue-tokens.js';
import { isShopUser, shopListItem, shopUserDetail } from '../mappers.js';
import { SignInProblem } from '../problems.js';
import { hashesEqual, newSessionId, tokenHash } from '../tokens.js';
import type { MembershipEntry, ShopEntry, ShopUserEntry } from '../directory.js';

async function authenticated(
  ctx: SignInContext,
  user: ShopUserEntry,
  m: { membership: MembershipEntry; shop: ShopEntry },
): Promise<PosAuthenticatedResponse> {
  const pair = await issueTokenPair(ctx, { kind: 'ShopUser', name: user.id }, 'pos');
  return { status: 'authenticated', ...pair, shopUser: shopUserDetail(user, m.membership, m.shop) };
}

/** The public routes of the point of sale. */
export function posRoutes(app: FastifyInstance, ctx: SignInContext): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.route({
    method: 'POST',
    url: '/auth/pos/login',
    schema: {
      summary:
        'Signs a ShopUser in at a till: authenticated with one shop, select_shop with a single-use sessionToken with several.',
      tags: ['pos'],
      body: credentialsRequest,
      response: { 200: posLoginResponse },
    },
    config: { problems: ['invalidCredentials', 'noShop', 'tooManyAttempts', 'unavailable'] },
    handler: async (request, reply): Promise<PosLoginResponse> => {
      const user = await authenticate(ctx, request, reply, request.body, isShopUser);
      const shops = activeMemberships(ctx.directory, user);
      const [only] = shops;
      if (only === undefined) throw new SignInProblem('noShop', 'the user has no membership of an existing shop');
      if (shops.length === 1) return authenticated(ctx, user, only);
      // The selection is a single-use record: select-shop deletes it, and only one delete can succeed.
      const id = newSessionId();
      const subject = { kind: 'ShopUser', name: user.id } as const;
      const sessionToken = await ctx.tokens.issueSessionToken(subject, id);
      await ctx.sessions.create({
        id,
        purpose: 'shop-selection',
        subject,
        audience: 'pos',
        tokenHash: tokenHash(sessionToken),
        previousTokenHashes: [],
        expiresAt: ctx.clock.now() + ctx.tokens.settings.sessionTokenTtlSeconds * 1000,
        revoked: false,
      });
      return {
        status: 'select_shop',
        sessionToken,
        expiresIn: ctx.tokens.settings.sessionTokenTtlSeconds,
        shops: shops.map((s) => shopListItem(s.shop)),
      };
    },
  });
  routes.route({
    method: 'POST',
    url: '/auth/pos/select-shop',
    schema: {
      summary: 'Completes a select_shop login with the chosen shop; the sessionToken is spent.',
      tags: ['pos'],
      body: selectShopRequest,
      response: { 200: posAuthenticatedResponse },
    },
    config: { problems: ['invalidSessionToken', 'notAttachedToShop'] },
    handler: async (request) => {
      const { body } = request;
      const invalid = new SignInProblem('invalidSessionToken', 'log in again at /auth/pos/login');
      const verified = await ctx.tokens.verifySessionToken(body.sessionToken);
      if (!verified || verified.subject.kind !== 'ShopUser') throw invalid;
      const selection = await ctx.sessions.get(verified.sessionId);
      if (
        !selection ||
        selection.purpose !== 'shop-selection' ||
        selection.expiresAt <= ctx.clock.now() ||
        !hashesEqual(selection.tokenHash, tokenHash(body.sessionToken))
      )
        throw invalid;
      const user = ctx.directory.identity(verified.subject);
      if (!user || !isShopUser(user) || !isActive(user)) throw invalid;
      if (!isShopId(body.shopId))
        throw new SignInProblem('notAttachedToShop', `the user is not attached to shop ${JSON.stringify(body.shopId)}`);
      const chosen = attachedShop(ctx, user, body.shopId);
      if (!(await ctx.sessions.delete(selection.id))) throw invalid;
      return authenticated(ctx, user, chosen);
    },
  });
}

/** The routes of a signed-in till: registered inside the bearer-auth plugin's scope. */
export function posProtectedRoutes(app: FastifyInstance, ctx: SignInContext): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.route({
    method: 'GET',
    url: '/auth/pos/me',
    schema: {
      summary: 'The signed-in user as seen in the shop named by X-Shop-Id, and the shops it may switch to.',
      tags: ['pos'],
      response: { 200: posProfileResponse },
    },
    config: { shopHeader: true, problems: ['invalidShopHeader', 'notAttachedToShop'] },
    handler: async (request) => {
      const user = shopUserOf(signedInCaller(request));
      const { membership, shop } = shopFromHeader(ctx, request, user);
      return {
        shopUser: shopUserDetail(user, membership, shop),
        availableShops: activeMemberships(ctx.directory, user).map((m) => shopListItem(m.shop)),
      };
    },
  });
  routes.route({
    method: 'POST',
    url: '/auth/pos/switch-shop',
    schema: {
      summary:
        'Checks the user may work in another shop and returns that profile; no new token (the access token is shop-agnostic).',
      tags: ['pos'],
      body: switchShopRequest,
      response: { 200: switchShopResponse },
    },
    config: { problems: ['notAttachedToShop'] },
    handler: async (request) => {
      const user = shopUserOf(signedInCaller(request));
      const { membership, shop } = attachedShop(ctx, user, request.body.shopId);
      return { shopUser: shopUserDetail(user, membership, shop) };
    },
  });
}
