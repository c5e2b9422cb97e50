/**
 * The gateway's authentication settings (flags in src/cli/gateway.ts, chart values in src/deploy/values.ts)
 * and their defaults: the windows (TokenReview 60 s success / 10 s failure, SubjectAccessReview
 * 60 s allow / 10 s deny) and caps.
 */
export type AuthMode = 'token-review' | 'none';
export const AUTH_MODES: readonly AuthMode[] = ['token-review', 'none'];

export interface AuthSettings {
  readonly mode: AuthMode;
  /** TokenReview spec.audiences; a token must have been minted for one of them. */
  readonly audiences: readonly string[];
  readonly tokenSuccessTtlMs: number;
  readonly tokenFailureTtlMs: number;
  readonly accessAllowTtlMs: number;
  readonly accessDenyTtlMs: number;
  /** LRU cap of each cache (token, access, and /metrics' token cache). */
  readonly cacheEntries: number;
  readonly maxReviewsInFlight: number;
  readonly reviewsPerSecond: number;
  readonly reviewTimeoutMs: number;
  /** The operator's --project template: the namespace a prediction call names is read from the path with it. */
  readonly projectTemplate: string;
}

export const DEFAULT_AUDIENCE = 'endpoint-operator-gateway';

export const DEFAULT_AUTH_SETTINGS: AuthSettings = {
  mode: 'token-review',
  audiences: [DEFAULT_AUDIENCE],
  tokenSuccessTtlMs: 60_000,
  tokenFailureTtlMs: 10_000,
  accessAllowTtlMs: 60_000,
  accessDenyTtlMs: 10_000,
  cacheEntries: 8192,
  maxReviewsInFlight: 64,
  reviewsPerSecond: 200,
  reviewTimeoutMs: 10_000,
  projectTemplate: '{namespace}',
};

/** Serving without checks (tests whose subject is not auth; clusters that authenticate in front of the gateway). */
export const NO_AUTH: AuthSettings = { ...DEFAULT_AUTH_SETTINGS, mode: 'none' };
