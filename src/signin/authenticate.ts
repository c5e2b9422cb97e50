import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignInContext } from './context.js';
import {
  isActive,
  membershipOf,
  type Identity,
  type MembershipEntry,
  type ShopEntry,
  type ShopUserEntry,
} from './directory.js';
import { loginAttempts } from './metrics.js';
import { SignInProblem } from './problems.js';
import type { Admission, Reservation } from './throttle.js';
import { addressClientKey, OVER_SHARE_DETAIL } from './over-share-refusal.js';

const GENERIC_FAILURE = 'the email or the password is wrong, or the account cannot sign in';

/** The email as every throttle and lookup keys it. */
export function accountKeyOf(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Checks credentials the same way whatever is wrong: unknown email, ambiguous email, missing Secret,
 * disabled account and wrong password all run one argon2id verification and end in the same 401, so
 * neither the answer nor its timing tells an attacker which accounts exist. Every attempt is
 * admitted by the throttles BEFORE the verification (see `admitAttempt`), and a success remembers
 * the client as a trusted device of the account. `accept` picks the kind of identity this endpoint
 * serves; another kind fails exactly like a wrong password.
 */
export async function authenticate<T extends Identity>(
  ctx: SignInContext,
  request: FastifyRequest,
  reply: FastifyReply,
  credentials: { readonly email: string; readonly password: string },
  accept: (identity: Identity) => identity is T,
): Promise<T> {
  const accountKey = accountKeyOf(credentials.email);
  const attempt = await admitAttempt(ctx, request, accountKey);
  // Over its share of verifications, a client is refused here, before any hashing, and its places
  // in the throttles are given back (a refusal is not a failed guess).
  const slot = ctx.verifications.admit(attempt.clientKey);
  if (!slot.admitted) {
    for (const r of attempt.reservations) r.settle(false);
    throw new SignInProblem('tooManyAttempts', OVER_SHARE_DETAIL, { retryAfterSeconds: slot.retryAfterSeconds });
  }
  let identity: Identity | undefined;
  let ok = false;
  try {
    const lookup = ctx.directory.lookupEmail(accountKey);
    identity = lookup.outcome === 'found' ? lookup.identity : undefined;
    const hash = identity ? ctx.directory.passwordHash(identity.passwordSecretRef) : undefined;
    const verified = await slot.ticket.run(() =>
      ctx.passwords.verify(hash, credentials.password, ctx.directory.strongestPasswordParams()),
    );
    ok = verified && identity !== undefined && isActive(identity) && accept(identity);
  } finally {
    slot.ticket.cancel();
    for (const r of attempt.reservations) r.settle(!ok);
  }
  loginAttempts.inc({ outcome: ok ? 'success' : 'failure' });
  if (!ok || !identity || !accept(identity)) throw new SignInProblem('invalidCredentials', GENERIC_FAILURE);
  ctx.throttles.sources.reset(attempt.sourceKey);
  await ctx.throttles.devices.remember(reply, accountKey);
  return identity;
}

/**
 * OWASP's Authentication Cheat Sheet, in order: a client with a valid device token for the account
 * is limited per device token only (a previously successful client keeps working whatever others
 * do); any other client takes a place in the per-address limit, in the growing delays of this
 * account from this address, and in the account's limit for unknown clients, which replicas share.
 * Places are taken before the password is verified, so a burst gets no more attempts than a
 * sequence; one refusal gives back the places already taken.
 */
async function admitAttempt(
  ctx: SignInContext,
  request: FastifyRequest,
  accountKey: string,
): Promise<{ reservations: Reservation[]; sourceKey: string; clientKey: string }> {
  const sourceKey = `${accountKey}\n${request.ip}`;
  const clientKey = addressClientKey(request.ip);
  const device = await ctx.throttles.devices.admit(request, accountKey);
  if (device?.admission.admitted)
    return { reservations: [device.admission.reservation], sourceKey, clientKey: `device ${device.deviceId}` };
  // An address over its share of verifications (one that got past over-share-refusal.ts: a cookie,
  // or a race with its own admission) is refused before it takes a place anywhere, above all in the
  // account's shared budget, whose claims are writes to the cluster.
  if (ctx.verifications.refuseOverShare(clientKey))
    throw new SignInProblem('tooManyAttempts', OVER_SHARE_DETAIL, { retryAfterSeconds: 1 });
  const taken: Reservation[] = [];
  const refuse = (retryAfterSeconds: number): never => {
    for (const r of taken) r.settle(false);
    loginAttempts.inc({ outcome: 'throttled' });
    throw new SignInProblem('tooManyAttempts', 'too many failed sign-ins; try again later', { retryAfterSeconds });
  };
  for (const admission of [ctx.throttles.addresses.admit(request.ip), ctx.throttles.sources.admit(sourceKey)]) {
    if (!admission.admitted) refuse(admission.retryAfterSeconds);
    else taken.push(admission.reservation);
  }
  let account: Admission;
  try {
    account = await ctx.throttles.accounts.admit(accountKey);
  } catch (err) {
    for (const r of taken) r.settle(false);
    loginAttempts.inc({ outcome: 'unavailable' });
    // Logged once, with the request id, by the server's error handler (the cause: the shared budget could not be read or written).
    throw new SignInProblem('unavailable', 'sign-in from a new client is unavailable for a moment; try again', {
      cause: err,
    });
  }
  if (!account.admitted) refuse(account.retryAfterSeconds);
  else taken.push(account.reservation);
  return { reservations: taken, sourceKey, clientKey };
}

// Shop ids are Shop metadata.names: RFC 1123 subdomains.
const SHOP_ID = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isShopId(value: string): boolean {
  return value.length <= 253 && SHOP_ID.test(value);
}

/** The shop named by X-Shop-Id: 400 when missing or malformed, 403 when the user is not attached to it. */
export function shopFromHeader(
  ctx: SignInContext,
  request: FastifyRequest,
  user: ShopUserEntry,
): { membership: MembershipEntry; shop: ShopEntry } {
  const header = request.headers['x-shop-id'];
  if (header === undefined)
    throw new SignInProblem(
      'invalidShopHeader',
      'the X-Shop-Id header is required: the id of the shop the till works in',
    );
  if (typeof header !== 'string' || !isShopId(header))
    throw new SignInProblem(
      'invalidShopHeader',
      'X-Shop-Id must be one shop id (a lowercase RFC 1123 name such as "lisbon-1")',
    );
  return attachedShop(ctx, user, header);
}

export function attachedShop(
  ctx: SignInContext,
  user: ShopUserEntry,
  shopId: string,
): { membership: MembershipEntry; shop: ShopEntry } {
  const found = membershipOf(ctx.directory, user, shopId);
  if (!found)
    throw new SignInProblem('notAttachedToShop', `the user is not attached to shop ${JSON.stringify(shopId)}`);
  return found;
}
