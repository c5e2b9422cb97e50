/**
 * One audience set's guard, the decorator pair of k8s.io/apiserver's cached token authenticator: a bearer
 * token → cached TokenReview → Caller; then Caller + a call's attributes → cached SubjectAccessReview.
 * Reviews the caches miss go through the review limiter. Failures are GoogleApiErrors: 401 UNAUTHENTICATED
 * (with `WWW-Authenticate: Bearer`), 403 PERMISSION_DENIED, 503 UNAVAILABLE, 429 RESOURCE_EXHAUSTED.
 */
import type { Clock } from '../../runtime/clock.js';
import { GoogleApiError } from '../google-errors.js';
import { accessAttributes, attributesKey, callAccessKey, permissionDeniedMessage, type AuthCall, type CallTarget } from './attributes.js';
import { DecisionCache } from './decision-cache.js';
import { jwtExpiryMs, Keyer } from './keys.js';
import { ReviewThrottledError, type ReviewLimiter } from './review-limiter.js';
import { ReviewUnavailableError, type AccessAuthorizer, type AccessVerdict, type TokenAuthenticator, type TokenVerdict, type UserInfo } from './reviews.js';
import type { AuthSettings } from './settings.js';

/** Who is calling, once authenticated. `key` is stable per principal and not reversible (keys.ts): for per-caller fairness. */
export interface Caller {
  readonly key: string;
  /** undefined with --auth=none. */
  readonly user: UserInfo | undefined;
}

const REALM = 'endpoint-operator-gateway';

/** A bearer token from an Authorization header (RFC 6750 §2.1; the scheme is case-insensitive). */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(header);
  return m?.[1];
}

function unauthenticated(message: string, tokenPresented: boolean): GoogleApiError {
  const err = new GoogleApiError('UNAUTHENTICATED', message);
  // RFC 6750 §3.1: no error attribute when no credentials were presented.
  err.headers = { 'www-authenticate': tokenPresented ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"` };
  return err;
}

export interface GuardParts {
  readonly authenticator: TokenAuthenticator;
  readonly authorizer: AccessAuthorizer;
  readonly limiter: ReviewLimiter;
  readonly settings: AuthSettings;
  readonly clock: Pick<Clock, 'now'>;
  readonly keyer?: Keyer;
}

/** A token's decision with what later calls need from it, derived once (each HMAC costs microseconds per call). */
interface KnownToken {
  readonly verdict: TokenVerdict;
  readonly caller: Caller | undefined;
}

/**
 * The keys the last call allowed from the caches on one connection used, with the exact inputs they were
 * derived from: a keep-alive connection usually carries one caller's calls to one endpoint, and the next
 * call with the same Authorization header and target reuses them instead of an HMAC of a ~1 KB token and
 * two string builds. Only derivations are remembered, never decisions: both are still read from the
 * caches (their windows, the LRU order and the hit counts unchanged), and any other header or target on
 * the connection derives its own keys. The header (a token) is held by its connection's entry while the
 * socket lives, as node's request objects hold it while a call is served; the caches hold only keyed hashes.
 */
interface ConnectionMemo {
  readonly header: string;
  readonly tokenKey: string;
  readonly caller: Caller;
  readonly call: AuthCall;
  readonly namespace: string;
  readonly name: string;
  readonly accessKey: string;
}

/** One audience set: cached token reviews and access reviews behind one limiter. */
export class RequestGuard {
  private readonly keyer: Keyer;
  private readonly tokens: DecisionCache<KnownToken>;
  private readonly access: DecisionCache<AccessVerdict>;
  private readonly userKeys = new WeakMap<Caller, string>();
  private readonly connections = new WeakMap<object, ConnectionMemo>();

  constructor(private readonly parts: GuardParts) {
    this.keyer = parts.keyer ?? new Keyer();
    this.tokens = new DecisionCache({ kind: 'token', maxEntries: parts.settings.cacheEntries, clock: parts.clock });
    this.access = new DecisionCache({ kind: 'access', maxEntries: parts.settings.cacheEntries, clock: parts.clock });
  }

  /** The caller behind an Authorization header; throws 401, 429 or 503 as GoogleApiError. */
  async authenticate(authorization: string | string[] | undefined): Promise<Caller> {
    const token = bearerToken(authorization);
    if (token === undefined) {
      if (authorization === undefined) {
        throw unauthenticated(`Request is missing required authentication credential: expected a bearer token (Authorization: Bearer TOKEN) minted for audience ${this.parts.settings.audiences.join(' or ')}, e.g. by kubectl create token SERVICE_ACCOUNT --audience ${this.parts.settings.audiences[0] ?? ''}.`, false);
      }
      throw unauthenticated('Request had invalid authentication credentials: the Authorization header is not of the form "Bearer TOKEN".', true);
    }
    const { settings, clock } = this.parts;
    const known = await this.tokens.get(this.keyer.token(token), async (expired) => {
      const verdict = await this.parts.limiter.run(() => this.parts.authenticator.authenticate(token), expired?.verdict.authenticated === true).catch((err: unknown) => { throw reviewFailure(err); });
      if (!verdict.authenticated) return { value: { verdict, caller: undefined }, ttlMs: settings.tokenFailureTtlMs };
      const caller: Caller = { key: this.keyer.principal(verdict.user), user: verdict.user };
      const userKey = this.keyer.user(verdict.user);
      this.userKeys.set(caller, userKey);
      const exp = jwtExpiryMs(token);
      return { value: { verdict, caller }, ttlMs: Math.min(settings.tokenSuccessTtlMs, exp === undefined ? Infinity : exp - clock.now()) };
    });
    if (known.caller === undefined) {
      const reason = known.verdict.authenticated ? 'the token was not accepted' : known.verdict.reason;
      throw unauthenticated(`Request had invalid authentication credentials: ${reason}. Expected a valid, unexpired bearer token minted for audience ${settings.audiences.join(' or ') || 'of the kube-apiserver'}.`, true);
    }
    return known.caller;
  }

  /**
   * The caller when both its token and this access are cached and allowed, found without a promise (the
   * hot path of every repeated call); undefined otherwise, and the caller takes authenticate + authorize.
   * `connection` (the socket) lets a keep-alive connection skip re-deriving keys: see ConnectionMemo.
   */
  cachedAllowed(authorization: string | string[] | undefined, call: AuthCall, target: CallTarget, connection?: object): Caller | undefined {
    if (typeof authorization !== 'string') return undefined;
    const memo = connection === undefined ? undefined : this.connections.get(connection);
    const sameHeader = memo !== undefined && memo.header === authorization;
    let tokenKey: string;
    if (sameHeader) {
      tokenKey = memo.tokenKey;
    } else {
      const token = bearerToken(authorization);
      if (token === undefined) return undefined;
      tokenKey = this.keyer.token(token);
    }
    const caller = this.tokens.peek(tokenKey)?.caller;
    if (caller === undefined) return undefined;
    const sameAccess = sameHeader && memo.caller === caller && memo.call === call && memo.namespace === target.namespace && memo.name === target.name;
    const accessKey = sameAccess ? memo.accessKey : `${this.userKeys.get(caller) ?? ''}\u0000${callAccessKey(call, target)}`;
    if (this.access.peek(accessKey)?.allowed !== true) return undefined;
    this.tokens.hit(tokenKey);
    this.access.hit(accessKey);
    if (connection !== undefined && !sameAccess) {
      this.connections.set(connection, { header: authorization, tokenKey, caller, call, namespace: target.namespace, name: target.name, accessKey });
    }
    return caller;
  }

  /**
   * Resolves when the caller may make `call` on `target`; throws 403, 429 or 503 as GoogleApiError.
   * `revealTarget` false: the refusal names only `described` (the target was found by a look-up, and must not leak).
   */
  async authorize(call: AuthCall, caller: Caller, target: CallTarget | undefined, described: string, revealTarget = true): Promise<void> {
    const user = caller.user;
    if (user === undefined) return;
    const attributes = accessAttributes(call, target);
    const { settings } = this.parts;
    // The user part is already a keyed hash: the access key needs no second one.
    const userKey = this.userKeys.get(caller) ?? this.keyer.user(user);
    const verdict = await this.access.get(`${userKey}\u0000${attributesKey(attributes)}`, async (expired) => {
      const value = await this.parts.limiter.run(() => this.parts.authorizer.authorize(user, attributes), expired?.allowed === true).catch((err: unknown) => { throw reviewFailure(err); });
      return { value, ttlMs: value.allowed ? settings.accessAllowTtlMs : settings.accessDenyTtlMs };
    });
    if (!verdict.allowed) throw new GoogleApiError('PERMISSION_DENIED', permissionDeniedMessage(call, described, revealTarget ? target : undefined));
  }
}

/** A review that could not be made, as the caller's answer. */
function reviewFailure(err: unknown): unknown {
  if (err instanceof ReviewUnavailableError) return new GoogleApiError('UNAVAILABLE', `The service is currently unavailable: ${err.message}. Retry later.`);
  if (err instanceof ReviewThrottledError) return new GoogleApiError('RESOURCE_EXHAUSTED', `Too many credentials to check: ${err.message}. Retry later.`);
  return err;
}

