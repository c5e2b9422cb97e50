import type { KubeClient } from '../../kube/kube-client.js';
import type { Logger } from '../../base/logger.js';
import { realClock } from '../../base/clock.js';
import { DEFAULT_TOKEN_SETTINGS } from '../tokens.js';
import { startSignInServer, type RunningSignInServer, type SignInServerOptions } from '../server.js';
import { ATTEMPT_WINDOW_MS } from '../account-budget.js';
import { KubernetesAttemptLedger } from './attempt-ledger.js';
import { KubernetesIdentityDirectory } from './directory.js';
import { reportSessions } from './metrics.js';
import { KubernetesSessionStore } from './sessions.js';
import { KubernetesSigningKeyStore } from './signing-key.js';

export interface KubernetesSignInOptions extends Omit<
  SignInServerOptions,
  'directory' | 'sessions' | 'signingKeys' | 'logger'
> {
  readonly client: KubeClient;
  /** Namespace of the Shops, ShopUsers, AdminUsers, their password Secrets, and the SignInSessions. */
  readonly namespace: string;
  /** Namespace and name of the signing-key Secret (default: `namespace`, `endpoint-operator-signin-key`). */
  readonly keySecretNamespace?: string;
  readonly keySecretName?: string;
  /** How often expired SignInSessions, and revoked ones whose access tokens have expired, are deleted (default 1 minute; 0 = never). */
  readonly sweepIntervalMs?: number;
  readonly logger?: Logger;
  /** How long to wait for the first list of every informer (default 60 s). */
  readonly syncTimeoutMs?: number;
  /** Stops everything when aborted (as `close()` does). */
  readonly signal?: AbortSignal;
}

export interface RunningKubernetesSignIn extends RunningSignInServer {
  /** The namespace's cache, which the operator's sign-in controllers also read (operator/signin-controllers.ts). */
  readonly directory: KubernetesIdentityDirectory;
  readonly sessions: KubernetesSessionStore;
}

/**
 * The sign-in API on a cluster: waits for the watch cache to hold every Shop, user and Secret
 * (answering before that would turn every login into a 401), loads or creates the shared signing
 * key, then listens. Ready on Shops and users is written by the operator (operator/signin-controllers.ts), from
 * this cache. `close()` stops the server, the informers and the sweeper.
 */
export async function startKubernetesSignIn(options: KubernetesSignInOptions): Promise<RunningKubernetesSignIn> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const { client, namespace, logger } = options;
  const directory = new KubernetesIdentityDirectory({ client, namespace, ...(logger ? { logger } : {}) });
  let offMetrics: (() => void) | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  try {
    const syncMs = options.syncTimeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), syncMs);
    });
    const sessions = new KubernetesSessionStore(client, namespace, {
      accessTokenTtlMs: (options.tokens?.accessTokenTtlSeconds ?? DEFAULT_TOKEN_SETTINGS.accessTokenTtlSeconds) * 1000,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(logger ? { logger } : {}),
    });
    // Serving before the revocation watch has listed would accept the tokens of families revoked before start.
    const bothSynced = Promise.all([directory.start(stop.signal), sessions.start(stop.signal)]).then((r) =>
      r.every(Boolean),
    );
    const synced = await Promise.race([bothSynced, timedOut]);
    clearTimeout(timer);
    if (synced === 'timeout') {
      throw new Error(
        `the sign-in watch cache of namespace ${namespace} did not sync within ${syncMs} ms: are the pos.endpoint-operator.dev CRDs installed and may the operator list Shops, ShopUsers, AdminUsers, SignInSessions and Secrets there?`,
      );
    }
    if (!synced) throw new Error('sign-in stopped before its watch cache synced');
    const signingKeys = new KubernetesSigningKeyStore(
      client,
      options.keySecretNamespace ?? namespace,
      options.keySecretName,
      logger,
    );
    await signingKeys.load();
    void signingKeys.watch(stop.signal);
    offMetrics = reportSessions(sessions);
    const attemptLedger = new KubernetesAttemptLedger(client, namespace, options.clock);
    const server = await startSignInServer({
      attemptLedger,
      ...options,
      directory: directory.index,
      sessions,
      signingKeys,
      ...(logger ? { logger } : {}),
    });
    const sweepMs = options.sweepIntervalMs ?? 60_000;
    if (sweepMs > 0) {
      sweeper = setInterval(() => {
        sessions
          .sweepExpired(options.clock ?? realClock)
          .catch((err: unknown) => logger?.warn({ err }, 'deleting expired SignInSessions failed'));
        attemptLedger
          .sweep(ATTEMPT_WINDOW_MS)
          .catch((err: unknown) => logger?.warn({ err }, 'deleting sign-in attempt Leases of past windows failed'));
      }, sweepMs);
      sweeper.unref();
    }
    const close = async (): Promise<void> => {
      options.signal?.removeEventListener('abort', onAbort);
      if (sweeper) clearInterval(sweeper);
      offMetrics?.();
      stop.abort();
      await server.close();
    };
    return { ...server, close, directory, sessions };
  } catch (err) {
    options.signal?.removeEventListener('abort', onAbort);
    if (sweeper) clearInterval(sweeper);
    offMetrics?.();
    stop.abort();
    throw err;
  }
}
