/**
 * The two questions the gateway asks the kube-apiserver, one POST each (the webhook authenticator and
 * authorizer of k8s.io/apiserver ask the same): a TokenReview (authentication.k8s.io/v1) "who holds
 * this token, for which audiences?", and a SubjectAccessReview (authorization.k8s.io/v1) "may this user
 * do this?". No caching here (cache.ts decorates these); a review the apiserver could not answer
 * (network error, timeout, 5xx, or any non-2xx such as the gateway lacking RBAC for reviews) is a
 * ReviewUnavailableError, never a "no".
 */
import type { KubeClient } from '../../kube/kube-client.js';
import type { ResourceRef } from '../../api/common/kube-object.js';
import type { AccessAttributes } from './attributes.js';
import { authReviewDuration, authReviews, type ReviewKind } from './metrics.js';

const TOKEN_REVIEWS: ResourceRef = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'tokenreviews',
  namespaced: false,
};
const ACCESS_REVIEWS: ResourceRef = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'subjectaccessreviews',
  namespaced: false,
};

/** status.user of a TokenReview: what a SubjectAccessReview is asked about. */
export interface UserInfo {
  readonly username: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type TokenVerdict =
  | { readonly authenticated: true; readonly user: UserInfo }
  | { readonly authenticated: false; readonly reason: string };

export interface AccessVerdict {
  readonly allowed: boolean;
}

export interface TokenAuthenticator {
  authenticate(token: string): Promise<TokenVerdict>;
}

export interface AccessAuthorizer {
  authorize(user: UserInfo, attributes: AccessAttributes): Promise<AccessVerdict>;
}

/** The kube-apiserver could not answer a review: answered 503 UNAVAILABLE, never cached. */
export class ReviewUnavailableError extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export interface ReviewOptions {
  /** Deadline of one review; past it the review is an error (503), not a refusal. */
  readonly timeoutMs: number;
}

async function review(
  client: KubeClient,
  kind: ReviewKind,
  ref: ResourceRef,
  body: unknown,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const started = performance.now();
  try {
    // Not the caller's signal: identical reviews are merged (cache.ts), so one caller leaving must not fail the others.
    const answer = await client.create<unknown>(ref, undefined, body, { signal: AbortSignal.timeout(timeoutMs) });
    const status = isRecord(answer) && isRecord(answer.status) ? answer.status : undefined;
    if (status === undefined) throw new Error('the answer has no status');
    authReviews.inc({ review: kind, result: 'ok' });
    return status;
  } catch (err) {
    authReviews.inc({ review: kind, result: 'error' });
    const why =
      err instanceof Error
        ? err.name === 'TimeoutError' || err.name === 'AbortError'
          ? `no answer within ${timeoutMs} ms`
          : err.message
        : String(err);
    throw new ReviewUnavailableError(`the kube-apiserver could not answer a ${ref.plural.slice(0, -1)}: ${why}`);
  } finally {
    authReviewDuration.observe({ review: kind }, (performance.now() - started) / 1000);
  }
}

/**
 * TokenReview with `spec.audiences` = the gateway's: a token is accepted only when the apiserver says
 * it is authenticated AND for one of those audiences, so a token minted for the apiserver or another
 * service cannot be replayed here. `audiences` empty = the apiserver's own audiences (what /metrics
 * is checked with, as controller-runtime's metrics filter does).
 */
export class TokenReviewAuthenticator implements TokenAuthenticator {
  constructor(
    private readonly client: KubeClient,
    private readonly audiences: readonly string[],
    private readonly options: ReviewOptions,
  ) {}

  async authenticate(token: string): Promise<TokenVerdict> {
    const spec: Record<string, unknown> = { token };
    if (this.audiences.length > 0) spec.audiences = this.audiences;
    const status = await review(
      this.client,
      'token',
      TOKEN_REVIEWS,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec },
      this.options.timeoutMs,
    );
    if (status.authenticated !== true || !isRecord(status.user)) {
      return {
        authenticated: false,
        reason:
          typeof status.error === 'string' && status.error !== ''
            ? 'the token was not accepted by the cluster'
            : 'the token is not valid',
      };
    }
    if (this.audiences.length > 0) {
      const granted = new Set(strings(status.audiences));
      if (!this.audiences.some((a) => granted.has(a)))
        return {
          authenticated: false,
          reason: `the token was not issued for this gateway (audience ${this.audiences.join(' or ')})`,
        };
    }
    const u = status.user;
    const extra: Record<string, string[]> = {};
    if (isRecord(u.extra)) for (const [k, v] of Object.entries(u.extra)) extra[k] = strings(v);
    return {
      authenticated: true,
      user: {
        username: typeof u.username === 'string' ? u.username : '',
        uid: typeof u.uid === 'string' ? u.uid : '',
        groups: strings(u.groups),
        extra,
      },
    };
  }
}

/** SubjectAccessReview for the token's user, uid, groups and extra on the call's attributes. */
export class SubjectAccessReviewAuthorizer implements AccessAuthorizer {
  constructor(
    private readonly client: KubeClient,
    private readonly options: ReviewOptions,
  ) {}

  async authorize(user: UserInfo, attributes: AccessAttributes): Promise<AccessVerdict> {
    const spec: Record<string, unknown> = { user: user.username, groups: user.groups, extra: user.extra };
    if (user.uid !== '') spec.uid = user.uid;
    if ('nonResource' in attributes) spec.nonResourceAttributes = attributes.nonResource;
    else spec.resourceAttributes = attributes.resource;
    const status = await review(
      this.client,
      'access',
      ACCESS_REVIEWS,
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
      this.options.timeoutMs,
    );
    return { allowed: status.allowed === true && status.denied !== true };
  }
}
