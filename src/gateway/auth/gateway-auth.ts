/**
 * The gateway's auth (controller-runtime's WithAuthenticationAndAuthorization, in two steps so the
 * registry can authenticate in an `onRequest` hook before it knows the object), over cached-reviewer.ts:
 * the gateway's calls (its audiences) and /metrics (the kube-apiserver's audience), decisions counted.
 * Failures leave as Google JSON errors: 401 UNAUTHENTICATED (with `WWW-Authenticate: Bearer`), 403
 * PERMISSION_DENIED, 503 UNAVAILABLE (the apiserver could not answer), 429 RESOURCE_EXHAUSTED (the
 * review limiter refused). No user name or token reaches a label or a log line.
 */
import type { IncomingMessage } from 'node:http';
import { realClock, type Clock } from '../../base/clock.js';
import type { KubeClient } from '../../kube/kube-client.js';
import type { Logger } from '../../base/logger.js';
import { GoogleApiError } from '../google-errors.js';
import { permissionDeniedMessage, type AuthCall, type CallTarget } from './attributes.js';
import { Keyer } from './keys.js';
import { authDecisions, authEnabled } from './metrics.js';
import { CachedReviewer, type Principal } from './cached-reviewer.js';
import { ReviewLimiter } from './review-limiter.js';
import { SubjectAccessReviewAuthorizer, TokenReviewAuthenticator } from './reviews.js';
import type { AuthSettings } from './settings.js';

export type { Principal } from './cached-reviewer.js';

const ANONYMOUS: Principal = { key: 'anonymous', user: undefined, accessKey: '' };

type Outcome = 'allowed' | 'unauthenticated' | 'forbidden' | 'unavailable' | 'throttled';

function countDecision(call: AuthCall, outcome: Outcome): void {
  authDecisions.inc({ call, outcome });
}

const UNAVAILABLE_LOG_MS = 10_000;

const OUTCOMES: Partial<Record<string, Exclude<Outcome, 'allowed'>>> = {
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
function guardOf(reviewer: CachedReviewer): MetricsGuard {
  return async (req) => {
    try {
      const principal = await reviewer.authenticate(req.headers.authorization);
      await reviewer.authorize('metrics', principal, undefined, '/metrics');
      countDecision('metrics', 'allowed');
      return undefined;
    } catch (err) {
      if (!(err instanceof GoogleApiError)) throw err;
      const outcome = OUTCOMES[err.status];
      if (outcome !== undefined) countDecision('metrics', outcome);
      return {
        status: err.httpCode,
        headers: { 'content-type': 'text/plain; charset=utf-8', ...err.headers },
        body: `${err.message}\n`,
      };
    }
  };
}

/** The /metrics guard of a process that serves no gateway calls (the operator: `run --metrics-auth`). */
export function createMetricsGuard(
  client: KubeClient,
  settings: AuthSettings,
  clock: Pick<Clock, 'now'> = realClock,
): MetricsGuard {
  const limiter = new ReviewLimiter({
    maxInFlight: settings.maxReviewsInFlight,
    perSecond: settings.reviewsPerSecond,
    clock,
  });
  const review = { timeoutMs: settings.reviewTimeoutMs };
  const authenticator = new TokenReviewAuthenticator(client, [], review);
  return guardOf(
    new CachedReviewer({
      authenticator,
      authorizer: new SubjectAccessReviewAuthorizer(client, review),
      limiter,
      settings: { ...settings, audiences: [] },
      clock,
    }),
  );
}

/** What the HTTP layers call: the gateway's calls (gateway audience) and /metrics (the apiserver's audience). */
export class GatewayAuth {
  private readonly metrics: MetricsGuard | undefined;
  /** When the last "reviews fail" warning was logged: one line per UNAVAILABLE_LOG_MS, not one per call. */
  private unavailableLoggedAt = -Infinity;

  private constructor(
    readonly enabled: boolean,
    private readonly calls: CachedReviewer | undefined,
    metrics: CachedReviewer | undefined,
    private readonly log?: Logger,
  ) {
    this.metrics = metrics === undefined ? undefined : guardOf(metrics);
    authEnabled.set(enabled ? 1 : 0);
  }

  static create(
    client: KubeClient,
    settings: AuthSettings,
    log: Logger,
    clock: Pick<Clock, 'now'> = realClock,
  ): GatewayAuth {
    if (settings.mode === 'none') {
      log.warn(
        'authentication is OFF (--auth=none): anyone who reaches the gateway can call every endpoint and read every registry service',
      );
      return new GatewayAuth(false, undefined, undefined);
    }
    const limiter = new ReviewLimiter({
      maxInFlight: settings.maxReviewsInFlight,
      perSecond: settings.reviewsPerSecond,
      clock,
    });
    const review = { timeoutMs: settings.reviewTimeoutMs };
    const keyer = new Keyer();
    const authorizer = new SubjectAccessReviewAuthorizer(client, review);
    const reviewer = (audiences: readonly string[]): CachedReviewer =>
      new CachedReviewer({
        authenticator: new TokenReviewAuthenticator(client, audiences, review),
        authorizer,
        limiter,
        settings: { ...settings, audiences },
        clock,
        keyer,
      });
    // /metrics: the apiserver's own audience, as Prometheus' ServiceAccount token is (controller-runtime's metrics filter).
    return new GatewayAuth(true, reviewer(settings.audiences), reviewer([]), log);
  }

  static disabled(): GatewayAuth {
    return new GatewayAuth(false, undefined, undefined);
  }

  /** Authentication alone (the registry's onRequest hook, before it knows which object the name belongs to). */
  async authenticate(call: AuthCall, authorization: string | string[] | undefined): Promise<Principal> {
    if (this.calls === undefined) return ANONYMOUS;
    try {
      return await this.calls.authenticate(authorization);
    } catch (err) {
      throw this.refused(call, err);
    }
  }

  async authorize(
    call: AuthCall,
    principal: Principal,
    target: CallTarget | undefined,
    described: string,
    revealTarget = true,
  ): Promise<void> {
    if (this.calls === undefined) return;
    try {
      await this.calls.authorize(call, principal, target, described, revealTarget);
    } catch (err) {
      throw this.refused(call, err);
    }
    countDecision(call, 'allowed');
  }

  /**
   * A call on an object named by the path (prediction): authorised before anything is looked up. A
   * path that no namespace can hold (its project does not fit the --project template) is NOT_FOUND once
   * the caller is authenticated; with --auth=none the call goes on as before.
   */
  async checkNamed(
    call: AuthCall,
    authorization: string | string[] | undefined,
    target: CallTarget | undefined,
    described: string,
    notFound: () => GoogleApiError,
  ): Promise<Principal> {
    const principal = await this.authenticate(call, authorization);
    if (target === undefined) {
      if (this.enabled) throw notFound();
      return principal;
    }
    await this.authorize(call, principal, target, described);
    return principal;
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
    if (
      outcome === 'unavailable' &&
      this.log !== undefined &&
      performance.now() - this.unavailableLoggedAt >= UNAVAILABLE_LOG_MS
    ) {
      this.unavailableLoggedAt = performance.now();
      // The reason is the transport's (connection refused, timeout, 5xx): never a user or a token.
      this.log.warn(
        { call, reason: (err as GoogleApiError).message },
        'the kube-apiserver could not review a call: answered 503 UNAVAILABLE',
      );
    }
    return err;
  }
}
