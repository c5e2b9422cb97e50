import type { Clock } from './clock.js';
import type { IdentityDirectory } from './directory.js';
import type { PasswordVerifier } from './passwords.js';
import type { RefreshTokens } from './refresh-rotation.js';
import type { SessionStore } from './sessions.js';
import type { FailureThrottle } from './throttle.js';
import type { TokenService } from './tokens.js';

/** Everything a route handler needs; built once by the server. */
export interface SignInContext {
  readonly directory: IdentityDirectory;
  readonly sessions: SessionStore;
  readonly refreshTokens: RefreshTokens;
  readonly tokens: TokenService;
  readonly passwords: PasswordVerifier;
  readonly accountThrottle: FailureThrottle;
  readonly ipThrottle: FailureThrottle;
  readonly clock: Clock;
}
