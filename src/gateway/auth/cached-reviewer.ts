/**
 * One audience set's reviewer, the decorator pair of k8s.io/apiserver's cached token authenticator: a bearer
 * token → cached TokenReview → Principal; then Principal + a call's attributes → cached SubjectAccessReview.
 * Reviews the caches miss go through the review limiter. Failures are GoogleApiErrors: 401 UNAUTHENTICATED
 * (with `WWW-Authenticate: Bearer`), 403 PERMISSION_DENIED, 503 UNAVAILABLE, 429 RESOURCE_EXHAUSTED.
 */
import type { Clock } from '../../base/clock.js';
import { GoogleApiError } from '../google-errors.js';
import {
  accessAttributes,
  attributesKey,
  permissionDeniedMessage,
  type AuthCall,
  type CallTarget,
} from './attributes.js';
import { DecisionCache } from './decision-cache.js';
import { jwtExpiryMs, Keyer } from './keys.js';
import { ReviewThrottledError, type ReviewLimiter } from './review-limiter.js';
import {
  ReviewUnavailableError,
  type AccessAuthorizer,
  type AccessVerdict,
  type TokenAuthenticator,
  type TokenVerdict,
  type UserInfo,
} from './reviews.js';
import type { AuthSettings } from './settings.js';

/** Who is calling, as a TokenReview established it. Its keys are keyed hashes (keys.ts), never reversible to a name. */
export interface Principal {
  /** Stable per principal: what per-caller fairness counts against. */
  readonly key: string;
  /** undefined with --auth=none. */
  readonly user: UserInfo | undefined;
  /** Everything a SubjectAccessReview is asked about the user: the user part of the access cache's key. */
  readonly accessKey: string;
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
  err.headers = {
    'www-authenticate': tokenPresented ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`,
  };
  return err;
}

export interface ReviewerParts {
  readonly authenticator: TokenAuthenticator;
  readonly authorizer: AccessAuthorizer;
  readonly limiter: ReviewLimiter;
  readonly settings: AuthSettings;
  readonly clock: Pick<Clock, 'now'>;
  readonly keyer?: Keyer;
}

/** A token's review, and the principal it established (undefined when refused). */
interface KnownToken {
  readonly verdict: TokenVerdict;
  readonly principal: Principal | undefined;
}

/** One audience set: cached token reviews and access reviews behind one limiter. */
export class CachedReviewer {
  private readonly keyer: Keyer;
  private readonly tokens: DecisionCache<KnownToken>;
  private readonly access: DecisionCache<AccessVerdict>;

  constructor(private readonly parts: ReviewerParts) {
    this.keyer = parts.keyer ?? new Keyer();
    this.tokens = new DecisionCache({ kind: 'token', maxEntries: parts.settings.cacheEntries, clock: parts.clock });
    this.access = new DecisionCache({ kind: 'access', maxEntries: parts.settings.cacheEntries, clock: parts.clock });
  }

  /** The principal behind an Authorization header; throws 401, 429 or 503 as GoogleApiError. */
  async authenticate(authorization: string | string[] | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    if (token === undefined) {
      if (authorization === undefined) {
        throw unauthenticated(
          `Request is missing required authentication credential: expected a bearer token (Authorization: Bearer TOKEN) minted for audience ${this.parts.settings.audiences.join(' or ')}, e.g. by kubectl create token SERVICE_ACCOUNT --audience ${this.parts.settings.audiences[0] ?? ''}.`,
          false,
        );
      }
      throw unauthenticated(
        'Request had invalid authentication credentials: the Authorization header is not of the form "Bearer TOKEN".',
        true,
      );
    }
    const { settings, clock } = this.parts;
    const known = await this.tokens.get(this.keyer.of('token', token), async (expired) => {
      const verdict = await this.parts.limiter
        .run(() => this.parts.authenticator.authenticate(token), expired?.verdict.authenticated === true)
        .catch((err: unknown) => {
          throw reviewFailure(err);
        });
      if (!verdict.authenticated)
        return { value: { verdict, principal: undefined }, ttlMs: settings.tokenFailureTtlMs };
      const principal: Principal = {
        key: this.keyer.principal(verdict.user),
        user: verdict.user,
        accessKey: this.keyer.user(verdict.user),
      };
      const exp = jwtExpiryMs(token);
      return {
        value: { verdict, principal },
        ttlMs: Math.min(settings.tokenSuccessTtlMs, exp === undefined ? Infinity : exp - clock.now()),
      };
    });
    if (known.principal === undefined) {
      const reason = known.verdict.authenticated ? 'the token was not accepted' : known.verdict.reason;
      throw unauthenticated(
        `Request had invalid authentication credentials: ${reason}. Expected a valid, unexpired bearer token minted for audience ${settings.audiences.join(' or ') || 'of the kube-apiserver'}.`,
        true,
      );
    }
    return known.principal;
  }

  /**
   * Resolves when the principal may make `call` on `target`; throws 403, 429 or 503 as GoogleApiError.
   * `revealTarget` false: the refusal names only `described` (the target was found by a look-up, and must not leak).
   */
  async authorize(
    call: AuthCall,
    principal: Principal,
    target: CallTarget | undefined,
    described: string,
    revealTarget = true,
  ): Promise<void> {
    const user = principal.user;
    if (user === undefined) return;
    const attributes = accessAttributes(call, target);
    const { settings } = this.parts;
    // The user part is already a keyed hash: the access key needs no second one.
    const verdict = await this.access.get(
      `${principal.accessKey}\u0000${attributesKey(attributes)}`,
      async (expired) => {
        const value = await this.parts.limiter
          .run(() => this.parts.authorizer.authorize(user, attributes), expired?.allowed === true)
          .catch((err: unknown) => {
            throw reviewFailure(err);
          });
        return { value, ttlMs: value.allowed ? settings.accessAllowTtlMs : settings.accessDenyTtlMs };
      },
    );
    if (!verdict.allowed)
      throw new GoogleApiError(
        'PERMISSION_DENIED',
        permissionDeniedMessage(call, described, revealTarget ? target : undefined),
      );
  }
}

/** A review that could not be made, as the caller's answer. */
function reviewFailure(err: unknown): unknown {
  if (err instanceof ReviewUnavailableError)
    return new GoogleApiError('UNAVAILABLE', `The service is currently unavailable: ${err.message}. Retry later.`);
  if (err instanceof ReviewThrottledError)
    return new GoogleApiError('RESOURCE_EXHAUSTED', `Too many credentials to check: ${err.message}. Retry later.`);
  return err;
}
