import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import type { SignInContext } from './context.js';
import type { IdentityDirectory } from './directory.js';
import { openApiDocument } from './openapi.js';
import { DEFAULT_ARGON2_PARAMS, PasswordVerifier, type Argon2Params } from './passwords.js';
import { SignInProblem, sendProblem } from './problems.js';
import { RefreshTokens } from './refresh-rotation.js';
import { registerRoute, type RouteSpec } from './route-kit.js';
import { adminRoutes } from './routes/admin.js';
import { posRoutes } from './routes/pos.js';
import { shopRoutes } from './routes/shop.js';
import { tokenRoutes } from './routes/tokens.js';
import { wellKnownRoutes } from './routes/well-known.js';
import type { SessionStore } from './sessions.js';
import type { SigningKeyStore } from './signing-key.js';
import { FailureThrottle } from './throttle.js';
import { DEFAULT_TOKEN_SETTINGS, TokenService, type TokenSettings } from './tokens.js';

export interface SignInServerOptions {
  readonly directory: IdentityDirectory;
  readonly sessions: SessionStore;
  readonly signingKeys: SigningKeyStore;
  readonly host?: string; // default 127.0.0.1
  readonly port?: number; // default 8443; 0 picks a free port
  readonly clock?: Clock;
  readonly tokens?: Partial<TokenSettings>;
  /** Parameters of the dummy hash that unknown emails are verified against; match your real hashes. */
  readonly argon2?: Argon2Params;
  /** Failed logins allowed per hour per account (default 100) and per client address (default 1000). */
  readonly accountFailuresPerHour?: number;
  readonly ipFailuresPerHour?: number;
  readonly bodyLimitBytes?: number; // default 16 KiB
  /** A pino logger, or false for none; default: pino at `info` with redaction. */
  readonly logger?: Logger | false;
  /** Trust X-Forwarded-For (behind an ingress) so throttling sees the real client address. */
  readonly trustProxy?: boolean;
}

/** Never logged, whatever a future log line includes (pino redaction paths). */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'password',
  'refreshToken',
  'accessToken',
  'sessionToken',
  '*.password',
  '*.refreshToken',
  '*.accessToken',
  '*.sessionToken',
  'body.*',
];

const HOUR_MS = 3_600_000;

export async function buildSignInApp(options: SignInServerOptions): Promise<{ app: FastifyInstance; context: SignInContext; routes: RouteSpec[] }> {
  const clock = options.clock ?? systemClock;
  const settings: TokenSettings = { ...DEFAULT_TOKEN_SETTINGS, ...options.tokens };
  const key = await options.signingKeys.load();
  const tokens = new TokenService(key, clock, settings);
  const context: SignInContext = {
    directory: options.directory,
    sessions: options.sessions,
    refreshTokens: new RefreshTokens(options.sessions, clock, settings.refreshTokenTtlSeconds),
    tokens,
    passwords: await PasswordVerifier.create(options.argon2 ?? DEFAULT_ARGON2_PARAMS),
    accountThrottle: new FailureThrottle(options.accountFailuresPerHour ?? 100, HOUR_MS, clock),
    ipThrottle: new FailureThrottle(options.ipFailuresPerHour ?? 1000, HOUR_MS, clock),
    clock,
  };
  const redact = { paths: REDACTED_PATHS, censor: '[REDACTED]' };
  // A logger handed in gets the redaction too (as a child), whatever its owner configured.
  const loggerOption =
    options.logger === false
      ? { logger: false }
      : options.logger === undefined
        ? { logger: { level: 'info', redact } }
        : { loggerInstance: options.logger.child({}, { redact }) };
  const app: FastifyInstance = Fastify({
    ...loggerOption,
    bodyLimit: options.bodyLimitBytes ?? 16 * 1024,
    trustProxy: options.trustProxy ?? false,
  }) as unknown as FastifyInstance;

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof SignInProblem) return sendProblem(reply, error, request.url);
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status === 413) return sendProblem(reply, new SignInProblem('payloadTooLarge', `the body must be at most ${options.bodyLimitBytes ?? 16 * 1024} bytes`), request.url);
    if (status === 415) return sendProblem(reply, new SignInProblem('unsupportedMediaType', 'send the body as application/json'), request.url);
    if (status >= 400 && status < 500) return sendProblem(reply, new SignInProblem('invalidRequest', (error as Error).message), request.url);
    request.log.error({ err: error }, 'sign-in request failed');
    return sendProblem(reply, new SignInProblem(status === 503 ? 'unavailable' : 'internal', 'the request could not be completed; try again'), request.url);
  });
  // Every body of this API is JSON; fastify also parses text/plain by default, which would turn a
  // form post into a 400 about the body's type (echoing it) instead of the documented 415.
  app.removeContentTypeParser('text/plain');
  app.setNotFoundHandler((request, reply) => sendProblem(reply, new SignInProblem('notFound', `${request.method} ${request.url.split('?')[0] ?? ''} is not a route of this API`)));

  const routes = [...adminRoutes(context), ...shopRoutes(context), ...posRoutes(context), ...tokenRoutes(context), ...wellKnownRoutes(context)];
  for (const r of routes) registerRoute(app, r);
  const document = openApiDocument(routes);
  app.get('/openapi.json', async () => document);
  return { app, context, routes };
}

export interface RunningSignInServer {
  readonly app: FastifyInstance;
  /** `http://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Builds the API and listens; TLS is expected to end at the ingress or service mesh in front of it. */
export async function startSignInServer(options: SignInServerOptions): Promise<RunningSignInServer> {
  const { app } = await buildSignInApp(options);
  const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8443 });
  return { app, url: address, close: () => app.close() };
}
