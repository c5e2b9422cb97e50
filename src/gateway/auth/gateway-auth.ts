/**
 * The gateway's guard (controller-runtime's WithAuthenticationAndAuthorization, in two steps so the
 * registry can authenticate in an `onRequest` hook before it knows the object): a bearer token →
 * cached TokenReview → Caller; then Caller + the call's attributes → cached SubjectAccessReview.
 * Failures leave as Google JSON errors: 401 UNAUTHENTICATED (with `WWW-Authenticate: Bearer`), 403
 * PERMISSION_DENIED, 503 UNAVAILABLE (the apiserver could not answer), 429 RESOURCE_EXHAUSTED (the
 * review limiter refused). No user name or token reaches a label or a log line.
 */
import type { IncomingMessage } from 'node:http';
import { realClock, type Clock } from '../../runtime/clock.js';
import type { KubeClient } from '../../runtime/kube-client.js';
import type { Logger } from '../../runtime/logger.js';
import { GoogleApiError } from '../google-errors.js';
import { accessAttributes, attributesKey, callAccessKey, permissionDeniedMessage, type AuthCall, type CallTarget } from './attributes.js';
import { DecisionCache } from './decision-cache.js';
import { jwtExpiryMs, Keyer } from './keys.js';
import { authDecisions, authEnabled } from './metrics.js';
import { ReviewLimiter, ReviewThrottledError } from './review-limiter.js';
import { ReviewUnavailableError, SubjectAccessReviewAuthorizer, TokenReviewAuthenticator, type AccessAuthorizer, type AccessVerdict, type TokenAuthenticator, type TokenVerdict, type UserInfo } from './reviews.js';
import type { AuthSettings } from './settings.js';

/** Who is calling, once authenticated. `key` is stable per principal and not reversible (keys.ts): for per-caller fairness. */
export interface Caller {
  readonly key: string;
  /** undefined with --auth=none. */
  readonly user: UserInfo | undefined;
}

const ANONYMOUS: Caller = { key: 'anonymous', user: undefined };
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
  /** keyer.user of the token's user: the access cache's key prefix. */
  readonly userKey: string;
}

/** One audience set: cached token reviews and access reviews behind one limiter. */
export class RequestGuard {
  private readonly keyer: Keyer;
  private readonly tokens: DecisionCache<KnownToken>;
  private readonly access: DecisionCache<AccessVerdict>;
  private readonly userKeys = new WeakMap<Caller, string>();

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
      if (!verdict.authenticated) return { value: { verdict, caller: undefined, userKey: '' }, ttlMs: settings.tokenFailureTtlMs };
      const caller: Caller = { key: this.keyer.principal(verdict.user), user: verdict.user };
      const userKey = this.keyer.user(verdict.user);
      this.userKeys.set(caller, userKey);
      const exp = jwtExpiryMs(token);
      return { value: { verdict, caller, userKey }, ttlMs: Math.min(settings.tokenSuccessTtlMs, exp === undefined ? Infinity : exp - clock.now()) };
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
   */
  cachedAllowed(authorization: string | string[] | undefined, call: AuthCall, target: CallTarget): Caller | undefined {
    const token = bearerToken(authorization);
    if (token === undefined) return undefined;
    const tokenKey = this.keyer.token(token);
    const caller = this.tokens.peek(tokenKey)?.caller;
    if (caller === undefined) return undefined;
    const accessKey = `${this.userKeys.get(caller) ?? ''}\u0000${callAccessKey(call, target)}`;
    if (this.access.peek(accessKey)?.allowed !== true) return undefined;
    this.tokens.hit(tokenKey);
    this.access.hit(accessKey);
    return caller;
  }

  /** Resolves when the caller may make `call` on `target`; throws 403, 429 or 503 as GoogleApiError. */
  /** `revealTarget` false: the refusal names only `described` (the target was found by a look-up, and must not leak). */
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

const decisionCounters = new Map<string, { inc(): void }>();

/** authDecisions' child for (call, outcome), bound once. */
function countDecision(call: AuthCall, outcome: 'allowed' | 'unauthenticated' | 'forbidden' | 'unavailable' | 'throttled'): void {
  const key = `${call}/${outcome}`;
  let counter = decisionCounters.get(key);
  if (counter === undefined) {
    counter = authDecisions.labels(call, outcome);
    decisionCounters.set(key, counter);
  }
  counter.inc();
}

const OUTCOMES: Partial<Record<string, 'unauthenticated' | 'forbidden' | 'unavailable' | 'throttled'>> = {
  UNAUTHENTICATED: 'unauthenticated',
  PERMISSION_DENIED: 'forbidden',
  UNAVAILABLE: 'unavailable',
  RESOURCE_EXHAUSTED: 'throttled',
};

export type MetricsRefusal = { status: number; headers: Record<string, string>; body: string };
export type MetricsGuard = (req: IncomingMessage) => Promise<MetricsRefusal | undefined>;

/**
 * controller-runtime's metrics filter: a bearer token for the kube-apiserver's own audience (Prometheus'
 * ServiceAccount token) whose user may `get` the non-resource URL /metrics. Refusals in plain text.
 */
function guardOf(guard: RequestGuard): MetricsGuard {
  return async (req) => {
    try {
      const caller = await guard.authenticate(req.headers.authorization);
      await guard.authorize('metrics', caller, undefined, '/metrics');
      countDecision('metrics', 'allowed');
      return undefined;
    } catch (err) {
      if (!(err instanceof GoogleApiError)) throw err;
      const outcome = OUTCOMES[err.status];
      if (outcome !== undefined) countDecision('metrics', outcome);
      return { status: err.httpCode, headers: { 'content-type': 'text/plain; charset=utf-8', ...err.headers }, body: `${err.message}\n` };
    }
  };
}

/** The /metrics guard of a process that serves no gateway calls (the operator: `run --metrics-auth`). */
export function createMetricsGuard(client: KubeClient, settings: AuthSettings, clock: Pick<Clock, 'now'> = realClock): MetricsGuard {
  const limiter = new ReviewLimiter({ maxInFlight: settings.maxReviewsInFlight, perSecond: settings.reviewsPerSecond, clock });
  const review = { timeoutMs: settings.reviewTimeoutMs };
  const authenticator = new TokenReviewAuthenticator(client, [], review);
  return guardOf(new RequestGuard({ authenticator, authorizer: new SubjectAccessReviewAuthorizer(client, review), limiter, settings: { ...settings, audiences: [] }, clock }));
}

/** What the HTTP layers call: the gateway's calls (gateway audience) and /metrics (the apiserver's audience). */
export class GatewayAuth {
  private readonly metrics: MetricsGuard | undefined;

  private constructor(
    readonly enabled: boolean,
    private readonly calls: RequestGuard | undefined,
    metrics: RequestGuard | undefined,
  ) {
    this.metrics = metrics === undefined ? undefined : guardOf(metrics);
    authEnabled.set(enabled ? 1 : 0);
  }

  static create(client: KubeClient, settings: AuthSettings, log: Logger, clock: Pick<Clock, 'now'> = realClock): GatewayAuth {
    if (settings.mode === 'none') {
      log.warn('authentication is OFF (--auth=none): anyone who reaches the gateway can call every endpoint and read every registry service');
      return new GatewayAuth(false, undefined, undefined);
    }
    const limiter = new ReviewLimiter({ maxInFlight: settings.maxReviewsInFlight, perSecond: settings.reviewsPerSecond, clock });
    const review = { timeoutMs: settings.reviewTimeoutMs };
    const keyer = new Keyer();
    const authorizer = new SubjectAccessReviewAuthorizer(client, review);
    const guard = (audiences: readonly string[]): RequestGuard =>
      new RequestGuard({ authenticator: new TokenReviewAuthenticator(client, audiences, review), authorizer, limiter, settings: { ...settings, audiences }, clock, keyer });
    // /metrics: the apiserver's own audience, as Prometheus' ServiceAccount token is (controller-runtime's metrics filter).
    return new GatewayAuth(true, guard(settings.audiences), guard([]));
  }

  static disabled(): GatewayAuth {
    return new GatewayAuth(false, undefined, undefined);
  }

  /** Authentication alone (the registry's onRequest hook, before it knows which object the name belongs to). */
  async authenticate(call: AuthCall, authorization: string | string[] | undefined): Promise<Caller> {
    if (this.calls === undefined) return ANONYMOUS;
    try {
      return await this.calls.authenticate(authorization);
    } catch (err) {
      throw this.refused(call, err);
    }
  }

  async authorize(call: AuthCall, caller: Caller, target: CallTarget | undefined, described: string, revealTarget = true): Promise<void> {
    if (this.calls === undefined) return;
    try {
      await this.calls.authorize(call, caller, target, described, revealTarget);
    } catch (err) {
      throw this.refused(call, err);
    }
    countDecision(call, 'allowed');
  }

  /** Both steps (the prediction path, whose target is read from the path). */
  async check(call: AuthCall, authorization: string | string[] | undefined, target: CallTarget | undefined, described: string): Promise<Caller> {
    const caller = await this.authenticate(call, authorization);
    await this.authorize(call, caller, target, described);
    return caller;
  }

  /**
   * A call on an object named by the path (prediction): authorised before anything is looked up. A
   * path that no namespace can hold (its project does not fit the --project template) is NOT_FOUND once
   * the caller is authenticated; with --auth=none the call goes on as before.
   */
  async checkNamed(call: AuthCall, authorization: string | string[] | undefined, target: CallTarget | undefined, described: string, notFound: () => GoogleApiError): Promise<Caller> {
    if (target !== undefined) {
      const cached = this.calls?.cachedAllowed(authorization, call, target);
      if (cached !== undefined) {
        countDecision(call, 'allowed');
        return cached;
      }
    }
    const caller = await this.authenticate(call, authorization);
    if (target === undefined) {
      if (this.enabled) throw notFound();
      return caller;
    }
    await this.authorize(call, caller, target, described);
    return caller;
  }

  /** The 403 for a name no object holds, identical to the refusal of one the caller may not use. */
  deny(call: AuthCall, described: string): GoogleApiError {
    countDecision(call, 'forbidden');
    return new GoogleApiError('PERMISSION_DENIED', permissionDeniedMessage(call, described, undefined));
  }

  /** The /metrics guard of a health server: undefined = serve; else the plain-text refusal (kube-rbac-proxy answers so). */
  guardMetrics(req: IncomingMessage): Promise<MetricsRefusal | undefined> {
    return this.metrics === undefined ? Promise.resolve(undefined) : this.metrics(req);
  }

  private refused(call: AuthCall, err: unknown): unknown {
    const outcome = err instanceof GoogleApiError ? OUTCOMES[err.status] : undefined;
    if (outcome !== undefined) countDecision(call, outcome);
    return err;
  }
}
