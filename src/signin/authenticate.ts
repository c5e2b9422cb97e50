import type { FastifyRequest } from 'fastify';
import type { SignInContext } from './context.js';
import { isActive, membershipOf, type Identity, type MembershipEntry, type ShopEntry, type ShopUserEntry } from './directory.js';
import { SignInProblem } from './problems.js';

const GENERIC_FAILURE = 'the email or the password is wrong, or the account cannot sign in';

/**
 * Checks credentials the same way whatever is wrong: unknown email, ambiguous email, missing Secret,
 * disabled account and wrong password all run one argon2id verification and end in the same 401, so
 * neither the answer nor its timing tells an attacker which accounts exist. Failures are counted per
 * account and per client address; past the limit the answer is 429 with Retry-After. `accept` picks
 * the kind of identity this endpoint serves; another kind fails exactly like a wrong password.
 */
export async function authenticate<T extends Identity>(ctx: SignInContext, email: string, password: string, clientIp: string, accept: (identity: Identity) => identity is T): Promise<T> {
  const accountKey = email.trim().toLowerCase();
  for (const decision of [ctx.accountThrottle.check(accountKey), ctx.ipThrottle.check(clientIp)]) {
    if (!decision.allowed) throw new SignInProblem('tooManyAttempts', 'too many failed sign-ins; try again later', { retryAfterSeconds: decision.retryAfterSeconds });
  }
  const lookup = ctx.directory.lookupEmail(accountKey);
  const identity = lookup.outcome === 'found' ? lookup.identity : undefined;
  const hash = identity ? ctx.directory.passwordHash(identity.passwordSecretRef) : undefined;
  const ok = await ctx.passwords.verify(hash, password);
  if (!ok || !identity || !isActive(identity) || !accept(identity)) {
    ctx.accountThrottle.recordFailure(accountKey);
    ctx.ipThrottle.recordFailure(clientIp);
    throw new SignInProblem('invalidCredentials', GENERIC_FAILURE);
  }
  return identity;
}

// Shop ids are Shop metadata.names: RFC 1123 subdomains.
const SHOP_ID = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isShopId(value: string): boolean {
  return value.length <= 253 && SHOP_ID.test(value);
}

/** The shop named by X-Shop-Id: 400 when missing or malformed, 403 when the user is not attached to it. */
export function shopFromHeader(ctx: SignInContext, request: FastifyRequest, user: ShopUserEntry): { membership: MembershipEntry; shop: ShopEntry } {
  const header = request.headers['x-shop-id'];
  if (header === undefined) throw new SignInProblem('invalidShopHeader', 'the X-Shop-Id header is required: the id of the shop the till works in');
  if (typeof header !== 'string' || !isShopId(header)) throw new SignInProblem('invalidShopHeader', 'X-Shop-Id must be one shop id (a lowercase RFC 1123 name such as "lisbon-1")');
  return attachedShop(ctx, user, header);
}

export function attachedShop(ctx: SignInContext, user: ShopUserEntry, shopId: string): { membership: MembershipEntry; shop: ShopEntry } {
  const found = membershipOf(ctx.directory, user, shopId);
  if (!found) throw new SignInProblem('notAttachedToShop', `the user is not attached to shop ${JSON.stringify(shopId)}`);
  return found;
}
