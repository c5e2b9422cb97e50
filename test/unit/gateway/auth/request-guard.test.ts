import { describe, expect, it } from 'vitest';
import { GoogleApiError } from '../../../../src/gateway/google-errors.js';
import { RequestGuard } from '../../../../src/gateway/auth/request-guard.js';
import { Keyer } from '../../../../src/gateway/auth/keys.js';
import { ReviewLimiter } from '../../../../src/gateway/auth/review-limiter.js';
import { ReviewUnavailableError, type AccessAuthorizer, type TokenAuthenticator, type TokenVerdict, type UserInfo } from '../../../../src/gateway/auth/reviews.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../../src/gateway/auth/settings.js';

const alice: UserInfo = { username: 'system:serviceaccount:ns:alice', uid: 'uid-a', groups: ['system:serviceaccounts'], extra: {} };
const jwt = (exp: number) => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.c2ln`;

/** Counts the token keys derived (an HMAC each). */
class CountingKeyer extends Keyer {
  derived = 0;
  override token(token: string): string {
    this.derived++;
    return super.token(token);
  }
}

/** Decides from a table, counting the reviews it was asked: what the guard's caching is measured against. */
function world() {
  let now = 1_000_000;
  const tokens = new Map<string, TokenVerdict | 'down'>();
  const allowed = new Set<string>();
  let down = false;
  const asked = { token: 0, access: 0 };
  const authenticator: TokenAuthenticator = {
    async authenticate(token) {
      asked.token++;
      const v = tokens.get(token);
      if (v === 'down' || down) throw new ReviewUnavailableError('connection refused');
      return v ?? { authenticated: false, reason: 'the token is not valid' };
    },
  };
  const authorizer: AccessAuthorizer = {
    async authorize(user, a) {
      asked.access++;
      if (down) throw new ReviewUnavailableError('connection refused');
      return { allowed: 'resource' in a && allowed.has(`${user.username} ${a.resource.verb} ${a.resource.namespace}/${a.resource.name ?? ''}`) };
    },
  };
  const clock = { now: () => now };
  const settings = { ...DEFAULT_AUTH_SETTINGS, tokenSuccessTtlMs: 60_000, tokenFailureTtlMs: 10_000, accessAllowTtlMs: 60_000, accessDenyTtlMs: 10_000 };
  const keyer = new CountingKeyer();
  const guard = new RequestGuard({ authenticator, authorizer, limiter: new ReviewLimiter({ maxInFlight: 10, perSecond: 1000, clock }), settings, clock, keyer });
  return { guard, keyer, tokens, allowed, asked, tick: (ms: number) => (now += ms), now: () => now, setDown: (d: boolean) => (down = d) };
}

async function rejection(p: Promise<unknown>): Promise<GoogleApiError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(GoogleApiError);
  return err as GoogleApiError;
}

describe('RequestGuard', () => {
  it('401s a missing or malformed header with a Bearer challenge, without asking the apiserver', async () => {
    const w = world();
    const missing = await rejection(w.guard.authenticate(undefined));
    expect([missing.httpCode, missing.status, missing.headers?.['www-authenticate']]).toEqual([401, 'UNAUTHENTICATED', 'Bearer realm="endpoint-operator-gateway"']);
    const basic = await rejection(w.guard.authenticate('Basic dXNlcjpwdw=='));
    expect(basic.headers?.['www-authenticate']).toContain('error="invalid_token"');
    expect(w.asked.token).toBe(0);
  });

  it('caches a success at most until the JWT exp, and a failure for the failure window', async () => {
    const w = world();
    const token = jwt(Math.floor(w.now() / 1000) + 5); // expires in 5 s, before the 60 s window
    w.tokens.set(token, { authenticated: true, user: alice });
    const caller = await w.guard.authenticate(`Bearer ${token}`);
    expect(caller.key).not.toContain('alice');
    await w.guard.authenticate(`bearer ${token}`);
    expect(w.asked.token).toBe(1);
    w.tick(5_000);
    w.tokens.delete(token);
    expect((await rejection(w.guard.authenticate(`Bearer ${token}`))).httpCode).toBe(401);
    expect(w.asked.token).toBe(2);
    w.tick(9_999);
    await rejection(w.guard.authenticate(`Bearer ${token}`));
    expect(w.asked.token).toBe(2);
    w.tick(1);
    w.tokens.set(token, { authenticated: true, user: alice });
    await w.guard.authenticate(`Bearer ${token}`);
    expect(w.asked.token).toBe(3);
  });

  it('answers 503 when the apiserver cannot review, and does not cache that', async () => {
    const w = world();
    w.tokens.set('t', 'down');
    const err = await rejection(w.guard.authenticate('Bearer t'));
    expect([err.httpCode, err.status]).toEqual([503, 'UNAVAILABLE']);
    w.tokens.set('t', { authenticated: true, user: alice });
    await w.guard.authenticate('Bearer t');
    expect(w.asked.token).toBe(2);
  });

  it('403s naming the refused permission; an allow is cached for the allow window, a denial for the deny window', async () => {
    const w = world();
    w.tokens.set('t', { authenticated: true, user: alice });
    const caller = await w.guard.authenticate('Bearer t');
    const target = { namespace: 'ns', name: 'ep' };
    const denied = await rejection(w.guard.authorize('predict', caller, target, 'projects/ns/locations/l/endpoints/ep'));
    expect([denied.httpCode, denied.status]).toEqual([403, 'PERMISSION_DENIED']);
    expect(denied.message).toContain('predictionendpoints/ep');
    w.allowed.add(`${alice.username} predict ns/ep`);
    await rejection(w.guard.authorize('predict', caller, target, 'x')); // the denial is still cached
    w.tick(10_000);
    await w.guard.authorize('predict', caller, target, 'x');
    expect(w.asked.access).toBe(2);
    w.allowed.clear(); // binding removed: still allowed until the allow window passes
    w.tick(59_999);
    await w.guard.authorize('predict', caller, target, 'x');
    w.tick(1);
    await rejection(w.guard.authorize('predict', caller, target, 'x'));
    expect(w.asked.access).toBe(3);
  });

  it('answers repeated allowed calls from the caches without a promise, and only while both decisions live', async () => {
    const w = world();
    w.tokens.set('t', { authenticated: true, user: alice });
    w.allowed.add(`${alice.username} predict ns/ep`);
    const target = { namespace: 'ns', name: 'ep' };
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target)).toBeUndefined();
    const caller = await w.guard.authenticate('Bearer t');
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target)).toBeUndefined(); // access not asked yet
    await w.guard.authorize('predict', caller, target, 'x');
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target)).toBe(caller);
    expect(w.guard.cachedAllowed('Bearer t', 'explain', target)).toBeUndefined();
    expect(w.guard.cachedAllowed('Bearer other', 'predict', target)).toBeUndefined();
    w.tick(60_000);
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target)).toBeUndefined();
    expect([w.asked.token, w.asked.access]).toEqual([1, 1]);
  });
  it('on one connection reuses the keys of its last allowed call only for the same header and target, and still reads both decisions', async () => {
    const w = world();
    w.tokens.set('t', { authenticated: true, user: alice });
    w.tokens.set('u', { authenticated: true, user: { ...alice, username: 'system:serviceaccount:ns:bob', uid: 'uid-b' } });
    w.allowed.add(`${alice.username} predict ns/ep`);
    const target = { namespace: 'ns', name: 'ep' };
    const socket = {};
    const caller = await w.guard.authenticate('Bearer t');
    await w.guard.authorize('predict', caller, target, 'x');
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target, socket)).toBe(caller);
    const derived = w.keyer.derived;
    expect(w.guard.cachedAllowed(['Bearer', 't'].join(' '), 'predict', target, socket)).toBe(caller); // an equal header, another string
    expect(w.keyer.derived).toBe(derived); // its key not derived again
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target, {})).toBe(caller); // another connection derives its own
    expect(w.keyer.derived).toBe(derived + 1);
    // Another caller on the same connection (a proxy's): its own token decision, not the memo's.
    expect(w.guard.cachedAllowed('Bearer u', 'predict', target, socket)).toBeUndefined();
    const bob = await w.guard.authenticate('Bearer u');
    await w.guard.authorize('predict', bob, target, 'x').catch(() => undefined); // bob may not predict: a cached denial
    expect(w.guard.cachedAllowed('Bearer u', 'predict', target, socket)).toBeUndefined();
    // The same header, another target or call: that access's own decision.
    expect(w.guard.cachedAllowed('Bearer t', 'predict', { namespace: 'ns', name: 'other' }, socket)).toBeUndefined();
    expect(w.guard.cachedAllowed('Bearer t', 'explain', target, socket)).toBeUndefined();
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target, socket)).toBe(caller);
    // The memo holds no decision: once the windows lapse, the same header on the same connection is reviewed again.
    w.tick(60_000);
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target, socket)).toBeUndefined();
    const again = await w.guard.authenticate('Bearer t');
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target, socket)).toBeUndefined(); // the access decision lapsed too
    await w.guard.authorize('predict', again, target, 'x');
    expect(w.guard.cachedAllowed('Bearer t', 'predict', target, socket)).toBe(again);
    expect([w.asked.token, w.asked.access]).toEqual([3, 3]);
  });
});
