import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpServer } from '../http/server.js';
import { availableParallelism } from 'node:os';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors, validatorCompiler } from 'fastify-type-provider-zod';
import { responseSerializer } from './response-serializer.js';
import type { Logger } from 'pino';
import { realClock, type Clock } from '../base/clock.js';
import type { SignInContext } from './context.js';
import type { IdentityDirectory } from './directory.js';
import { installJsonBodyParser } from '../http/fastify-json.js';
import { requestIdOf } from '../http/request-id.js';
import { isRequestTimeout, SIGNIN_SERVER_LIMITS, type ServerLimits } from '../http/server-limits.js';
import { registerOpenApi } from './openapi.js';
import { reportSignInServerError, sendPortRefusal } from './request-id-and-errors.js';
import { DEFAULT_ARGON2_PARAMS, PasswordVerifier, type Argon2Params } from './passwords.js';
import { problemBody, ProblemTypes, SignInProblem, sendProblem } from './problems.js';
import { RefreshTokens } from './refresh-rotation.js';
import { bearerAuthPlugin } from './bearer-auth.js';
import { collectRoutes, type Route } from './route-table.js';
import { invalidBodyProblem } from './invalid-body.js';
import { adminRoutes } from './routes/admin.js';
import { posProtectedRoutes, posRoutes } from './routes/pos.js';
import { shopRoutes } from './routes/shop.js';
import { tokenRoutes } from './routes/tokens.js';
import { wellKnownRoutes } from './routes/well-known.js';
import type { SessionStore } from './sessions.js';
import type { SigningKeyStore } from './signing-key.js';
import { AccountBudget, ATTEMPT_WINDOW_MS, MemoryAttemptLedger, type AttemptLedger } from './account-budget.js';
import { DeviceTrust } from './device-trust.js';
import { DEFAULT_VERIFICATION_LIMITS, VerificationQueue, type VerificationLimits } from './verification-queue.js';
import { FailureWindow, GrowingDelay } from './throttle.js';
import { clientAddressOf, fastifyTrustProxy, type TrustedProxies } from './trusted-proxies.js';
import { overShareRefusal, SECURITY_HEADERS } from './over-share-refusal.js';
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
  /**
   * Password guessing (OWASP): sign-in attempts per hour per account from clients without a device
   * token, shared by replicas through `attemptLedger` (default 100); failures per hour per client
   * address across accounts (default 1000); free failures per account and address before delays
   * start doubling (default 5); failures per hour per device token (default 10).
   */
  readonly accountFailuresPerHour?: number;
  readonly ipFailuresPerHour?: number;
  readonly sourceFreeFailures?: number;
  readonly deviceFailuresPerHour?: number;
  /** Where the per-account budget lives: a Kubernetes Lease per account on a cluster; default this process. */
  readonly attemptLedger?: AttemptLedger;
  readonly bodyLimitBytes?: number; // default 16 KiB
  /** Active refresh families per user; one more login revokes the oldest (default 10). */
  readonly maxSessionsPerUser?: number;
  /** A pino logger, or false for none; default: pino at `info` with redaction. */
  readonly logger?: Logger | false;
  /** The proxies whose X-Forwarded-For says who the client is (see trusted-proxies.ts); default none. */
  readonly trustedProxies?: TrustedProxies;
  /** Concurrent password verifications, the share of one client and the queue (verification-queue.ts); default: cores, 4, 256. */
  readonly verificationLimits?: Partial<VerificationLimits>;
  /** Timeouts and connection cap of the port; default SIGNIN_SERVER_LIMITS. */
  readonly serverLimits?: Partial<ServerLimits>;
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

/**
 * On every answer: nothing is sniffed or framed (the API serves JSON only), and nothing is cached
 * unless the route says so (tokens and profiles must not sit in a shared or browser cache).
 */
function setSecurityHeaders(reply: FastifyReply): void {
  reply.headers(SECURITY_HEADERS);
  if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
}

/**
 * Node answers headers over its limit (16 KiB) itself, before fastify sees a request: answer that
 * in the API's problem+json form too.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, kind, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ([431, 'headersTooLarge', 'the request headers exceed 16 KiB'] as const)
      : isRequestTimeout(err)
        ? ([408, 'requestTimeout', 'the request did not arrive in time'] as const)
        : ([400, 'invalidRequest', 'the request is not valid HTTP/1.1'] as const);
  const body = JSON.stringify(problemBody(kind, detail));
  const reason = { 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 400: 'Bad Request' }[status];
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function buildSignInApp(
  options: SignInServerOptions,
): Promise<{ app: FastifyInstance; context: SignInContext; routes: Route[] }> {
  const clock = options.clock ?? realClock;
  const settings: TokenSettings = { ...DEFAULT_TOKEN_SETTINGS, ...options.tokens };
  const tokens = new TokenService(await options.signingKeys.load(), clock, settings);
  const offKeys = options.signingKeys.onChange((keys) => tokens.setKeys(keys));
  const context: SignInContext = {
    directory: options.directory,
    sessions: options.sessions,
    refreshTokens: new RefreshTokens(
      options.sessions,
      clock,
      settings.refreshTokenTtlSeconds,
      options.maxSessionsPerUser,
    ),
    tokens,
    passwords: await PasswordVerifier.create(options.argon2 ?? DEFAULT_ARGON2_PARAMS),
    throttles: {
      devices: new DeviceTrust(tokens, clock, {
        ...(options.deviceFailuresPerHour === undefined ? {} : { failuresPerHour: options.deviceFailuresPerHour }),
      }),
      accounts: new AccountBudget(
        options.attemptLedger ?? new MemoryAttemptLedger(clock),
        options.accountFailuresPerHour ?? 100,
        ATTEMPT_WINDOW_MS,
        clock,
      ),
      sources: new GrowingDelay(clock, {
        ...(options.sourceFreeFailures === undefined ? {} : { freeFailures: options.sourceFreeFailures }),
      }),
      addresses: new FailureWindow(options.ipFailuresPerHour ?? 1000, HOUR_MS, clock),
    },
    verifications: new VerificationQueue({
      ...DEFAULT_VERIFICATION_LIMITS,
      concurrency: availableParallelism(),
      ...options.verificationLimits,
    }),
    clock,
  };
  const redact = { paths: REDACTED_PATHS, censor: '[REDACTED]' };
  const limits: ServerLimits = { ...SIGNIN_SERVER_LIMITS, ...options.serverLimits };
  // A logger handed in gets the redaction too (as a child), whatever its owner configured.
  const loggerOption =
    options.logger === false
      ? { logger: false }
      : options.logger === undefined
        ? { logger: { level: 'info', redact } }
        : { loggerInstance: options.logger.child({}, { redact }) };
  const overShare = overShareRefusal(context.verifications, clientAddressOf(options.trustedProxies));
  const app: FastifyInstance = Fastify({
    ...loggerOption,
    bodyLimit: options.bodyLimitBytes ?? 16 * 1024,
    trustProxy: fastifyTrustProxy(options.trustedProxies),
    clientErrorHandler,
    // The server fastify would make, with logins over their client's share answered before fastify.
    serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) =>
      createHttpServer({
        limits,
        front: { refuse: (req, res, refusal) => sendPortRefusal(req.url ?? '/', res, refusal) },
        onRequest: (req, res) => {
          if (!overShare.refuse(req, res)) handler(req, res);
        },
      }),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    genReqId: requestIdOf,
    requestIdHeader: false,
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializer);
  app.setErrorHandler((error, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error))
      return sendProblem(reply, invalidBodyProblem(request.routeOptions.schema?.body, request.body), request.url);
    if (error instanceof SignInProblem) {
      if (ProblemTypes[error.kind].status >= 500)
        reportSignInServerError(request, ProblemTypes[error.kind].status, error.cause ?? error);
      return sendProblem(reply, error, request.url);
    }
    const status =
      typeof (error as { statusCode?: unknown }).statusCode === 'number'
        ? (error as { statusCode: number }).statusCode
        : 500;
    if (status === 413)
      return sendProblem(
        reply,
        new SignInProblem('payloadTooLarge', `the body must be at most ${options.bodyLimitBytes ?? 16 * 1024} bytes`),
        request.url,
      );
    if (status === 415)
      return sendProblem(
        reply,
        new SignInProblem('unsupportedMediaType', 'send the body as application/json'),
        request.url,
      );
    if (status >= 400 && status < 500)
      return sendProblem(reply, new SignInProblem('invalidRequest', (error as Error).message), request.url);
    reportSignInServerError(request, status, error);
    return sendProblem(
      reply,
      new SignInProblem(status === 503 ? 'unavailable' : 'internal', 'the request could not be completed; try again'),
      request.url,
    );
  });
  // Every body of this API is JSON; fastify also parses text/plain by default, which would turn a
  // form post into a 400 about the body's type (echoing it) instead of the documented 415.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app, {
    utf8Only: true,
    refuse: (status, message) => new SignInProblem(status === 415 ? 'unsupportedMediaType' : 'invalidRequest', message),
  });
  app.addHook('onClose', async () => offKeys());
  app.addHook('onSend', async (_request, reply) => {
    setSecurityHeaders(reply);
  });

  // The generator must hear every route (it listens to onRoute), so it is registered before them.
  await registerOpenApi(app);
  const registeredRoutes = collectRoutes(app);
  adminRoutes(app, context);
  shopRoutes(app, context);
  posRoutes(app, context);
  tokenRoutes(app, context);
  wellKnownRoutes(app, context);
  // Protected routes live in the bearer-auth plugin's scope: its onRequest hook authenticates before the body is read.
  await app.register(async (scope) => {
    // Every protected route is the point of sale's: back-office and admin tokens have another `aud`.
    await bearerAuthPlugin(context, 'pos')(scope);
    posProtectedRoutes(scope, context);
  });
  const routes = registeredRoutes();
  // The routes that verify a password (those that may answer invalidCredentials) are the ones refused early.
  overShare.cover(routes.filter((r) => r.info.problems.includes('invalidCredentials')).map((r) => r.info.url));
  const methodsByUrl = new Map<string, string[]>([['/openapi.json', ['GET', 'HEAD']]]);
  for (const r of routes)
    methodsByUrl.set(r.info.url, [
      ...(methodsByUrl.get(r.info.url) ?? []),
      r.info.method,
      ...(r.info.method === 'GET' ? ['HEAD'] : []),
    ]);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = methodsByUrl.get(path);
    // RFC 9110 §15.5.6: a known resource with another method is 405 with the methods it allows.
    if (allowed)
      return sendProblem(
        reply.header('Allow', allowed.join(', ')),
        new SignInProblem(
          'methodNotAllowed',
          `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}`,
        ),
      );
    return sendProblem(reply, new SignInProblem('notFound', `${request.method} ${path} is not a route of this API`));
  });
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
