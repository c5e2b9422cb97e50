import type { Clock } from '../base/clock.js';
import type { IdentityDirectory } from './directory.js';
import type { PasswordVerifier } from './passwords.js';
import type { RefreshTokens } from './refresh-rotation.js';
import type { SessionStore } from './sessions.js';
import type { AccountBudget } from './account-budget.js';
import type { DeviceTrust } from './device-trust.js';
import type { FailureWindow, GrowingDelay } from './throttle.js';
import type { TokenService } from './tokens.js';
import type { VerificationQueue } from './verification-queue.js';

/** Everything a route handler needs; built once by the server. */
export interface SignInContext {
  readonly directory: IdentityDirectory;
  readonly sessions: SessionStore;
  readonly refreshTokens: RefreshTokens;
  readonly tokens: TokenService;
  readonly passwords: PasswordVerifier;
  readonly throttles: SignInThrottles;
  /** Password verifications: bounded concurrency, a fair share per client (verification-queue.ts). */
  readonly verifications: VerificationQueue;
  readonly clock: Clock;
}

/** The limits on password guessing (OWASP Authentication Cheat Sheet); see authenticate.ts. */
export interface SignInThrottles {
  /** Clients that signed in to the account before: limited per device token. */
  readonly devices: DeviceTrust;
  /** Other clients: the account's shared budget per window, across replicas. */
  readonly accounts: AccountBudget;
  /** Other clients: growing delays per account and client address. */
  readonly sources: GrowingDelay;
  /** Other clients: failures per client address, across accounts. */
  readonly addresses: FailureWindow;
}
