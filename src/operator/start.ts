/**
 * Assembles the operator: informers for the four kinds (in every watched namespace), their
 * controllers, leader election (only the leader reconciles; followers keep their caches warm so
 * a takeover starts from a synced cache), the health/metrics server and a draining stop().
 * Free of CLI parsing: `endpoint-operator run`/`dev` map flags onto OperatorSettings.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import type { Clock } from '../base/clock.js';
import type { Controller } from '../runtime/controller.js';
import { EventRecorder } from '../runtime/events.js';
import { createMetricsGuard } from '../gateway/auth/gateway-auth.js';
import { DEFAULT_AUTH_SETTINGS, type AuthMode } from '../gateway/auth/settings.js';
import { HealthChecks, startHealthServer, type RunningHealthServer } from '../runtime/health-server.js';
import type { KubeClient } from '../kube/kube-client.js';
import { LeaderElector } from '../runtime/leader-election.js';
import type { Logger } from '../base/logger.js';
import { metricsRegistry } from '../base/metrics.js';
import { IdAssignments } from '../reconcilers/deployed-model-ids.js';
import type { Informers } from '../reconcilers/context.js';
import { reportReadiness } from './resource-metrics.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { fixedCatalogue } from '../api/prediction/v1/machine-catalogue.js';
import { machineCatalogueWatch } from './machine-catalogue-watch.js';
import { gatewayCaPublisher, gatewayCaSource } from './gateway-ca-configmaps.js';
import { artifactBucketsInformer, createShard, type RegistrySharing, type Shard } from './shard.js';
import { registryNameClaims } from '../reconcilers/registry-name-claims.js';
import type { KubernetesIdentityDirectory } from '../signin/kube/directory.js';
import { signInControllers } from './signin-controllers.js';
import type { ModelNetworkPolicySettings } from '../reconcilers/serving/network-policy-plan.js';

export interface LeaderElectionSettings {
  readonly enabled: boolean;
  /** Namespace of the Lease. */
  readonly namespace: string;
  readonly leaseName: string;
  /** Unique per replica; default `<hostname>-<random>`. */
  readonly identity?: string;
  readonly leaseDurationSeconds?: number;
  readonly renewDeadlineSeconds?: number;
  readonly retryPeriodSeconds?: number;
}

export interface OperatorSettings {
  /** Template of the project in endpoint names; `{namespace}` is replaced (names/endpointProject). */
  readonly project: string;
  readonly location: string;
  /** The gateway's base URL, published in PredictionEndpoint `status.url`; absent = not published. */
  readonly gatewayUrl?: string | undefined;
  /** Namespaces to watch; empty or absent = all namespaces. */
  readonly namespaces?: readonly string[];
  /** Concurrent reconciles per controller. */
  readonly workers: number;
  readonly reservedPrefixes?: readonly string[];
  readonly leaderElection: LeaderElectionSettings;
  /** Port of `/metrics`; absent or negative = not served (0 = any free port). Same as healthPort = one server. */
  readonly metricsPort?: number;
  /** Port of `/healthz` and `/readyz` (and `/metrics`); absent or negative = not served. */
  readonly healthPort?: number;
  /** Bind address of those servers; default 0.0.0.0. */
  readonly bindAddress?: string;
  /** `token-review`: /metrics needs a bearer token whose user may get the URL /metrics; absent or `none` = open. */
  readonly metricsAuth?: AuthMode;
  /** The ConfigMap (in leaderElection.namespace, the operator's) holding the machine catalogue, followed live; absent = the built-in one. */
  readonly machineCatalogueConfigMap?: string | undefined;
  /**
   * The gateway's certificate Secret, whose `ca.crt` is published as a ConfigMap in every namespace with a
   * PredictionEndpoint or RegistryService (gateway-ca-configmaps.ts); absent = not published (a plain-HTTP gateway).
   */
  readonly gatewayCaSecret?: { readonly namespace: string; readonly name: string } | undefined;
  /**
   * A NetworkPolicy per DeployedModel with containerSpec, admitting ingress to its pods only from the gateway's pods
   * (and the extra peers); absent = none, and the ones the operator made are deleted.
   */
  readonly modelNetworkPolicy?: ModelNetworkPolicySettings | undefined;
}

export interface StartOperatorOptions {
  readonly client: KubeClient;
  readonly settings: OperatorSettings;
  readonly log: Logger;
  /** Status timestamps and the ordering grace; default: the wall clock. */
  readonly clock?: Clock;
  /**
   * The sign-in API's cache of its namespace (run by the sign-in server on every replica): the operator then also
   * writes Ready on that namespace's Shops, ShopUsers and AdminUsers (signin-controllers.ts), under the same Lease.
   */
  readonly signIn?: KubernetesIdentityDirectory | undefined;
}

export interface RunningOperator {
  /** Resolves when every informer has synced (the operator can serve /readyz). */
  readonly ready: Promise<void>;
  /** Stops reconciling (draining in-flight work), releases the lease, stops informers and servers. Idempotent. */
  stop(): Promise<void>;
  readonly metrics: Registry;
  /** Resolves when the operator stopped: `stopped` after stop(), `leadershipLost` when the lease was lost (exit and restart). */
  readonly done: Promise<'stopped' | 'leadershipLost'>;
  /** Whether this replica currently reconciles. */
  isLeader(): boolean;
  /** Ports actually bound (useful with port 0). */
  readonly ports: Promise<{ health?: number; metrics?: number }>;
  /** The objects of one kind in the operator's informer caches (all watched namespaces), e.g. to observe convergence in-process. */
  cached(kind: keyof Informers): KubeObject[];
}

const DRAIN_TIMEOUT_MS = 15_000;

export async function startOperator(options: StartOperatorOptions): Promise<RunningOperator> {
  const { client, settings, log } = options;
  const stopping = new AbortController();
  const events = new EventRecorder({
    client,
    component: 'endpoint-operator',
    instance: settings.leaderElection.identity ?? hostname(),
    logger: log,
  });
  const ids = new IdAssignments();
  const namespaces: (string | undefined)[] =
    settings.namespaces && settings.namespaces.length > 0 ? [...settings.namespaces] : [undefined];
  const reservedPrefixes = settings.reservedPrefixes ?? DEFAULT_RESERVED_PREFIXES;
  // One owner per RegistryService name over every watched namespace, so one tracker for all shards.
  const registry: RegistrySharing = { claims: registryNameClaims({ reservedPrefixes }) };
  // Followed live (machine-catalogue-watch.ts): its informer runs and is waited for with the others.
  const catalogueWatch =
    settings.machineCatalogueConfigMap === undefined
      ? undefined
      : machineCatalogueWatch(
          client,
          { namespace: settings.leaderElection.namespace, name: settings.machineCatalogueConfigMap, events, log },
          stopping.signal,
        );
  const machineCatalogue = catalogueWatch?.source ?? fixedCatalogue();
  // The bucket map is cluster-scoped: one informer for every shard.
  const artifactBuckets = artifactBucketsInformer(client, log);
  const shards: Shard[] = namespaces.map((namespace) =>
    createShard({
      client,
      namespace,
      settings: {
        project: settings.project,
        location: settings.location,
        gatewayUrl: settings.gatewayUrl,
        reservedPrefixes,
      },
      registry,
      machineCatalogue,
      artifactBuckets,
      modelNetworkPolicy: settings.modelNetworkPolicy,
      workers: settings.workers,
      events,
      ids,
      log,
      ...(options.clock ? { clock: options.clock } : {}),
    }),
  );
  const caSource =
    settings.gatewayCaSecret === undefined ? undefined : gatewayCaSource(client, settings.gatewayCaSecret, log);
  const caPublishers = caSource
    ? shards.map((shard, i) =>
        gatewayCaPublisher({
          client,
          namespace: namespaces[i],
          informers: shard.informers,
          source: caSource,
          workers: settings.workers,
          log,
        }),
      )
    : [];
  const informers = [
    ...shards.flatMap((s) => s.allInformers()),
    ...(catalogueWatch ? [catalogueWatch.informer] : []),
    artifactBuckets,
    ...(caSource ? [caSource.informer, ...caPublishers.map((p) => p.configMaps)] : []),
  ];
  // Every informer listens on the stop signal while it runs and while it is waited for: a few per informer, not a leak.
  setMaxListeners(10 + 3 * informers.length, stopping.signal);
  const controllers: Controller[] = [
    ...shards.flatMap((s) => [...s.controllers]),
    ...caPublishers.map((p) => p.controller),
    ...(options.signIn
      ? signInControllers({ client, directory: options.signIn, events, workers: settings.workers, log })
      : []),
  ];

  const informerRuns = informers.map((i) => i.run(stopping.signal));
  const unreportReadiness = reportReadiness((kind) => shards.flatMap((s) => s.informers[kind].list()));
  const ready = Promise.all(informers.map((i) => i.waitForSync(stopping.signal))).then(() => undefined);

  const checks = new HealthChecks();
  checks.addReadyCheck(
    'informers-synced',
    () => informers.every((i) => i.hasSynced()) || 'informer caches not synced yet',
  );
  checks.addLiveCheck('ping', () => true);
  const servers: RunningHealthServer[] = [];
  const ports: { health?: number; metrics?: number } = {};
  const host = settings.bindAddress ?? '0.0.0.0';
  const guardMetrics =
    settings.metricsAuth === 'token-review' ? createMetricsGuard(client, DEFAULT_AUTH_SETTINGS) : undefined;
  const guard = guardMetrics === undefined ? {} : { guardMetrics };
  if (settings.healthPort !== undefined && settings.healthPort >= 0) {
    const server = await startHealthServer({
      port: settings.healthPort,
      host,
      checks,
      log,
      ...(settings.metricsPort === settings.healthPort ? guard : {}),
    });
    servers.push(server);
    ports.health = server.port;
    if (settings.metricsPort === settings.healthPort) ports.metrics = server.port;
  }
  if (settings.metricsPort !== undefined && settings.metricsPort >= 0 && settings.metricsPort !== settings.healthPort) {
    const server = await startHealthServer({ port: settings.metricsPort, host, checks, log, ...guard });
    servers.push(server);
    ports.metrics = server.port;
  }

  let leading = false;
  let controllerRuns: Promise<void>[] = [];
  // Caches must be complete before the first reconcile: a DeployedModel reconciled before the
  // endpoint informer synced would be reported EndpointNotFound (a false transition and a write).
  const runControllers = async (signal: AbortSignal): Promise<void> => {
    await ready;
    if (signal.aborted) return;
    leading = true;
    log.info({ controllers: controllers.length }, 'reconciling');
    controllerRuns = controllers.map((c) => c.run(signal));
    await Promise.all(controllerRuns);
    leading = false;
  };

  let resolveDone!: (why: 'stopped' | 'leadershipLost') => void;
  const done = new Promise<'stopped' | 'leadershipLost'>((resolve) => {
    resolveDone = resolve;
  });
  let electorRun: Promise<void> = Promise.resolve();
  let elector: LeaderElector | undefined;
  if (settings.leaderElection.enabled) {
    const le = settings.leaderElection;
    elector = new LeaderElector({
      client,
      namespace: le.namespace,
      name: le.leaseName,
      identity: le.identity ?? `${hostname()}-${randomBytes(4).toString('hex')}`,
      logger: log,
      ...(le.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: le.leaseDurationSeconds } : {}),
      ...(le.renewDeadlineSeconds !== undefined ? { renewDeadlineSeconds: le.renewDeadlineSeconds } : {}),
      ...(le.retryPeriodSeconds !== undefined ? { retryPeriodSeconds: le.retryPeriodSeconds } : {}),
    });
    electorRun = elector.run(
      {
        onStartedLeading: (signal) => runControllers(signal),
        onNewLeader: (identity) => log.info({ leader: identity }, 'leader observed'),
        onStoppedLeading: () => {
          // A replica that lost the lease may hold stale assumptions (ids it assigned, queued work):
          // client-go's advice is to exit and start over from a fresh list.
          if (!stopping.signal.aborted) {
            log.error('lost leadership; stopping');
            void stop('leadershipLost');
          }
        },
      },
      stopping.signal,
    );
  } else {
    void runControllers(stopping.signal);
  }

  let stopped: Promise<void> | undefined;
  const stop = (why: 'stopped' | 'leadershipLost' = 'stopped'): Promise<void> => {
    stopped ??= (async () => {
      // Drain in-flight reconciles before the lease is released, so the next leader never overlaps with us.
      await Promise.all(controllers.map((c) => c.shutdown(DRAIN_TIMEOUT_MS)));
      stopping.abort();
      unreportReadiness();
      await Promise.allSettled([electorRun, ...controllerRuns, ...informerRuns]);
      await Promise.all(servers.map((s) => s.close()));
      resolveDone(why);
    })();
    return stopped;
  };

  return {
    ready,
    stop: () => stop('stopped'),
    metrics: metricsRegistry,
    done,
    isLeader: () => leading,
    ports: Promise.resolve(ports),
    cached: (kind) => shards.flatMap((s) => s.informers[kind].list()),
  };
}
