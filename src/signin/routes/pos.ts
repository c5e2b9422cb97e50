import { attachedShop, authenticate, isShopId, shopFromHeader } from '../authenticate.js';
import { shopUserOf } from '../bearer-auth.js';
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
import { noBody, route, type Route } from '../route-kit.js';
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

export function posRoutes(ctx: SignInContext): Route[] {
  return [
    route({
      method: 'POST',
      url: '/auth/pos/login',
      summary:
        'Signs a ShopUser in at a till: authenticated with one shop, select_shop with a single-use sessionToken with several.',
      tag: 'pos',
      body: credentialsRequest,
      response: posLoginResponse,
      problems: ['invalidCredentials', 'noShop', 'tooManyAttempts', 'unavailable'],
      handler: async ({ body, request, reply }): Promise<PosLoginResponse> => {
        const user = await authenticate(ctx, request, reply, body, isShopUser);
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
    }),
    route({
      method: 'POST',
      url: '/auth/pos/select-shop',
      summary: 'Completes a select_shop login with the chosen shop; the sessionToken is spent.',
      tag: 'pos',
      body: selectShopRequest,
      response: posAuthenticatedResponse,
      problems: ['invalidSessionToken', 'notAttachedToShop'],
      handler: async ({ body }) => {
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
          throw new SignInProblem(
            'notAttachedToShop',
            `the user is not attached to shop ${JSON.stringify(body.shopId)}`,
          );
        const chosen = attachedShop(ctx, user, body.shopId);
        if (!(await ctx.sessions.delete(selection.id))) throw invalid;
        return authenticated(ctx, user, chosen);
      },
    }),
    route({
      method: 'GET',
      url: '/auth/pos/me',
      summary: 'The signed-in user as seen in the shop named by X-Shop-Id, and the shops it may switch to.',
      tag: 'pos',
      bearer: true,
      shopHeader: true,
      body: noBody,
      response: posProfileResponse,
      problems: ['invalidShopHeader', 'notAttachedToShop'],
      handler: async ({ request, caller }) => {
        const user = shopUserOf(caller);
        const { membership, shop } = shopFromHeader(ctx, request, user);
        return {
          shopUser: shopUserDetail(user, membership, shop),
          availableShops: activeMemberships(ctx.directory, user).map((m) => shopListItem(m.shop)),
        };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/pos/switch-shop',
      summary:
        'Checks the user may work in another shop and returns that profile; no new token (the access token is shop-agnostic).',
      tag: 'pos',
      bearer: true,
      body: switchShopRequest,
      response: switchShopResponse,
      problems: ['notAttachedToShop'],
      handler: async ({ body, caller }) => {
        const user = shopUserOf(caller);
        const { membership, shop } = attachedShop(ctx, user, body.shopId);
        return { shopUser: shopUserDetail(user, membership, shop) };
      },
    }),
  ];
}
