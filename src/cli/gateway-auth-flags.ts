/**
 * The gateway's authentication flags (chart values `gateway.auth.*`, src/deploy/values.ts) and their
 * reading into AuthSettings (src/gateway/auth/settings.ts).
 */
import { DEFAULT_PROJECT_TEMPLATE, projectTemplateProblem } from '../api/prediction/v1/names.js';
import { AUTH_MODES, DEFAULT_AUTH_SETTINGS as D, type AuthMode, type AuthSettings } from '../gateway/auth/settings.js';
import { UsageError, list, num, str, type FlagSpec, type FlagValues } from './flags.js';

export const GATEWAY_AUTH_FLAGS: readonly FlagSpec[] = [
  {
    name: 'auth',
    type: 'string',
    env: 'EO_GATEWAY_AUTH',
    default: D.mode,
    placeholder: 'MODE',
    help: 'token-review: every call needs a bearer token (TokenReview) and RBAC permission (SubjectAccessReview); none: no checks (logs a warning)',
  },
  {
    name: 'auth-audiences',
    type: 'list',
    env: 'EO_GATEWAY_AUTH_AUDIENCES',
    default: D.audiences,
    placeholder: 'AUD[,AUD]',
    help: 'audiences a token must have been minted for (kubectl create token SA --audience ...)',
  },
  {
    name: 'auth-token-ttl',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_TOKEN_TTL',
    default: D.tokenSuccessTtlMs / 1000,
    placeholder: 'SECONDS',
    help: "how long an accepted token is cached (never past the token's exp)",
  },
  {
    name: 'auth-token-failure-ttl',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_TOKEN_FAILURE_TTL',
    default: D.tokenFailureTtlMs / 1000,
    placeholder: 'SECONDS',
    help: 'how long a refused token is cached',
  },
  {
    name: 'auth-access-ttl',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_ACCESS_TTL',
    default: D.accessAllowTtlMs / 1000,
    placeholder: 'SECONDS',
    help: 'how long an allowed SubjectAccessReview is cached (a removed binding takes effect within it)',
  },
  {
    name: 'auth-access-deny-ttl',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_ACCESS_DENY_TTL',
    default: D.accessDenyTtlMs / 1000,
    placeholder: 'SECONDS',
    help: 'how long a denied SubjectAccessReview is cached',
  },
  {
    name: 'auth-cache-size',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_CACHE_SIZE',
    default: D.cacheEntries,
    placeholder: 'N',
    help: 'entries in each decision cache (least recently used evicted)',
  },
  {
    name: 'auth-max-reviews-in-flight',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_MAX_REVIEWS_IN_FLIGHT',
    default: D.maxReviewsInFlight,
    placeholder: 'N',
    help: 'reviews at the kube-apiserver at once; more are answered 429 RESOURCE_EXHAUSTED',
  },
  {
    name: 'auth-reviews-per-second',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_REVIEWS_PER_SECOND',
    default: D.reviewsPerSecond,
    placeholder: 'N',
    help: 'reviews sent to the kube-apiserver per second; more are answered 429 RESOURCE_EXHAUSTED',
  },
  {
    name: 'auth-review-timeout',
    type: 'number',
    env: 'EO_GATEWAY_AUTH_REVIEW_TIMEOUT',
    default: D.reviewTimeoutMs / 1000,
    placeholder: 'SECONDS',
    help: 'deadline of one review (then 503 UNAVAILABLE)',
  },
  {
    name: 'project',
    type: 'string',
    env: 'EO_PROJECT',
    default: DEFAULT_PROJECT_TEMPLATE,
    placeholder: 'TEMPLATE',
    help: "the operator's --project template: a call's namespace is read from its path with it (must match the operator's)",
  },
];

function seconds(values: FlagValues, name: string, allowZero: boolean): number {
  const v = num(values, name);
  if (!(v > 0 || (allowZero && v === 0)))
    throw new UsageError(`--${name} must be ${allowZero ? 'zero or more' : 'more than zero'} seconds, got ${v}`);
  return v * 1000;
}

function count(values: FlagValues, name: string): number {
  const v = num(values, name);
  if (!Number.isInteger(v) || v < 1) throw new UsageError(`--${name} must be a whole number of at least 1, got ${v}`);
  return v;
}

export function gatewayAuthConfig(values: FlagValues): AuthSettings {
  const mode = str(values, 'auth') ?? D.mode;
  if (!AUTH_MODES.includes(mode as AuthMode))
    throw new UsageError(`--auth must be one of ${AUTH_MODES.join(', ')}, got ${JSON.stringify(mode)}`);
  const audiences = list(values, 'auth-audiences');
  if (mode === 'token-review' && audiences.length === 0)
    throw new UsageError(
      '--auth-audiences must name at least one audience with --auth=token-review (a token for any audience would be accepted otherwise)',
    );
  const projectTemplate = str(values, 'project') ?? DEFAULT_PROJECT_TEMPLATE;
  const problem = projectTemplateProblem(projectTemplate);
  if (problem !== undefined) throw new UsageError(`--project ${JSON.stringify(projectTemplate)} ${problem}`);
  return {
    mode: mode as AuthMode,
    audiences,
    tokenSuccessTtlMs: seconds(values, 'auth-token-ttl', true),
    tokenFailureTtlMs: seconds(values, 'auth-token-failure-ttl', true),
    accessAllowTtlMs: seconds(values, 'auth-access-ttl', true),
    accessDenyTtlMs: seconds(values, 'auth-access-deny-ttl', true),
    cacheEntries: count(values, 'auth-cache-size'),
    maxReviewsInFlight: count(values, 'auth-max-reviews-in-flight'),
    reviewsPerSecond: count(values, 'auth-reviews-per-second'),
    reviewTimeoutMs: seconds(values, 'auth-review-timeout', false),
    projectTemplate,
  };
}
