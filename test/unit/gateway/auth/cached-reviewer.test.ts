import { describe, expect, it } from 'vitest';
import { GoogleApiError } from '../../../../src/gateway/google-errors.js';
import { CachedReviewer } from '../../../../src/gateway/auth/cached-reviewer.js';
import { Keyer } from '../../../../src/gateway/auth/keys.js';
import { ReviewLimiter } from '../../../../src/gateway/auth/review-limiter.js';
import {
  ReviewUnavailableError,
  type AccessAuthorizer,
  type TokenAuthenticator,
  type TokenVerdict,
  type UserInfo,
} from '../../../../src/gateway/auth/reviews.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../../src/gateway/auth/settings.js';

const alice: UserInfo = {
  username: 'system:serviceaccount:ns:alice',
  uid: 'uid-a',
  groups: ['system:serviceaccounts'],
  extra: {},
};
const jwt = (exp: number) => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.c2ln`;

/** Decides from a table, counting the reviews it was asked: what the reviewer's caching is measured against. */
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
      return {
        allowed:
          'resource' in a &&
          allowed.has(`${user.username} ${a.resource.verb} ${a.resource.namespace}/${a.resource.name ?? ''}`),
      };
    },
  };
  const clock = { now: () => now };
  const settings = {
    ...DEFAULT_AUTH_SETTINGS,
    tokenSuccessTtlMs: 60_000,
    tokenFailureTtlMs: 10_000,
    accessAllowTtlMs: 60_000,
    accessDenyTtlMs: 10_000,
  };
  const keyer = new Keyer();
  const reviewer = new CachedReviewer({
    authenticator,
    authorizer,
    limiter: new ReviewLimiter({ maxInFlight: 10, perSecond: 1000, clock }),
    settings,
    clock,
    keyer,
  });
  return {
    reviewer,
    keyer,
    tokens,
    allowed,
    asked,
    tick: (ms: number) => (now += ms),
    now: () => now,
    setDown: (d: boolean) => (down = d),
  };
}

async function rejection(p: Promise<unknown>): Promise<GoogleApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GoogleApiError);
  return err as GoogleApiError;
}

describe('CachedReviewer', () => {
  it('401s a missing or malformed header with a Bearer challenge, without asking the apiserver', async () => {
    const w = world();
    const missing = await rejection(w.reviewer.authenticate(undefined));
    expect([missing.httpCode, missing.status, missing.headers?.['www-authenticate']]).toEqual([
      401,
      'UNAUTHENTICATED',
      'Bearer realm="endpoint-operator-gateway"',
    ]);
    const basic = await rejection(w.reviewer.authenticate('Basic dXNlcjpwdw=='));
    expect(basic.headers?.['www-authenticate']).toContain('error="invalid_token"');
    expect(w.asked.token).toBe(0);
  });

  it('caches a success at most until the JWT exp, and a failure for the failure window', async () => {
    const w = world();
    const token = jwt(Math.floor(w.now() / 1000) + 5); // expires in 5 s, before the 60 s window
    w.tokens.set(token, { authenticated: true, user: alice });
    const caller = await w.reviewer.authenticate(`Bearer ${token}`);
    expect(caller.key).not.toContain('alice');
    await w.reviewer.authenticate(`bearer ${token}`);
    expect(w.asked.token).toBe(1);
    w.tick(5_000);
    w.tokens.delete(token);
    expect((await rejection(w.reviewer.authenticate(`Bearer ${token}`))).httpCode).toBe(401);
    expect(w.asked.token).toBe(2);
    w.tick(9_999);
    await rejection(w.reviewer.authenticate(`Bearer ${token}`));
    expect(w.asked.token).toBe(2);
    w.tick(1);
    w.tokens.set(token, { authenticated: true, user: alice });
    await w.reviewer.authenticate(`Bearer ${token}`);
    expect(w.asked.token).toBe(3);
  });

  it('answers 503 when the apiserver cannot review, and does not cache that', async () => {
    const w = world();
    w.tokens.set('t', 'down');
    const err = await rejection(w.reviewer.authenticate('Bearer t'));
    expect([err.httpCode, err.status]).toEqual([503, 'UNAVAILABLE']);
    w.tokens.set('t', { authenticated: true, user: alice });
    await w.reviewer.authenticate('Bearer t');
    expect(w.asked.token).toBe(2);
  });

  it('403s naming the refused permission; an allow is cached for the allow window, a denial for the deny window', async () => {
    const w = world();
    w.tokens.set('t', { authenticated: true, user: alice });
    const caller = await w.reviewer.authenticate('Bearer t');
    const target = { namespace: 'ns', name: 'ep' };
    const denied = await rejection(
      w.reviewer.authorize('predict', caller, target, 'projects/ns/locations/l/endpoints/ep'),
    );
    expect([denied.httpCode, denied.status]).toEqual([403, 'PERMISSION_DENIED']);
    expect(denied.message).toContain('predictionendpoints/ep');
    w.allowed.add(`${alice.username} predict ns/ep`);
    await rejection(w.reviewer.authorize('predict', caller, target, 'x')); // the denial is still cached
    w.tick(10_000);
    await w.reviewer.authorize('predict', caller, target, 'x');
    expect(w.asked.access).toBe(2);
    w.allowed.clear(); // binding removed: still allowed until the allow window passes
    w.tick(59_999);
    await w.reviewer.authorize('predict', caller, target, 'x');
    w.tick(1);
    await rejection(w.reviewer.authorize('predict', caller, target, 'x'));
    expect(w.asked.access).toBe(3);
  });

  it('derives the same keys for an equal header in another string, and reviews each once while its decision lives', async () => {
    const w = world();
    w.tokens.set('t', { authenticated: true, user: alice });
    w.allowed.add(`${alice.username} predict ns/ep`);
    const target = { namespace: 'ns', name: 'ep' };
    for (const header of ['Bearer t', ['Bearer', 't'].join(' ')]) {
      const principal = await w.reviewer.authenticate(header);
      await w.reviewer.authorize('predict', principal, target, 'x');
    }
    await rejection(w.reviewer.authorize('explain', await w.reviewer.authenticate('Bearer t'), target, 'x'));
    expect([w.asked.token, w.asked.access]).toEqual([1, 2]);
    w.tick(60_000);
    await w.reviewer.authorize('predict', await w.reviewer.authenticate('Bearer t'), target, 'x');
    expect([w.asked.token, w.asked.access]).toEqual([2, 3]);
  });
});
