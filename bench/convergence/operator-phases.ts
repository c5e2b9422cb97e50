/**
 * The operator's side of the convergence benchmark, run in this process against the bench's
 * control plane: B1 (apply everything at once, time until every object is Ready with a current
 * observedGeneration) and B2 (restart with everything Ready: time until the caches synced, and
 * what the fresh operator writes while it re-reconciles every object: the goal is nothing).
 */
import { pino } from 'pino';
import { startOperator, type RunningOperator } from '../../src/operator/start.js';
import { resources } from '../../src/api/kind-bindings.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import type { KubeObject } from '../../src/api/common/kube-object.js';
import {
  activeWorkers,
  reconcileTotal,
  restClientRequests,
  statusConflicts,
  statusWrites,
  workqueueDepth,
} from '../../src/base/metrics.js';
import { metricValue } from '../../test/support/metric-value.js';
import { LOCATION, PROJECT, pool, type Item } from './workload.js';

const VERBS = ['POST', 'PATCH', 'PUT', 'DELETE', 'GET'] as const;
const KINDS = ['PredictionEndpoint', 'DeployedModel', 'RegistryService', 'RegistryEndpoint'] as const;

/** Counters of this process's API traffic, read before and after a phase. */
export interface Traffic {
  readonly requests: Record<string, number>;
  readonly statusWrites: Record<string, number>;
  readonly conflicts: number;
}

async function traffic(): Promise<Traffic> {
  const requests: Record<string, number> = {};
  for (const verb of VERBS) requests[verb] = await metricValue(restClientRequests, { verb });
  const writes: Record<string, number> = {};
  for (const kind of KINDS) writes[kind] = await metricValue(statusWrites, { kind });
  return { requests, statusWrites: writes, conflicts: await metricValue(statusConflicts) };
}

function minus(after: Traffic, before: Traffic): Traffic {
  const sub = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
  return {
    requests: sub(after.requests, before.requests),
    statusWrites: sub(after.statusWrites, before.statusWrites),
    conflicts: after.conflicts - before.conflicts,
  };
}

export function sum(record: Record<string, number>): number {
  return Object.values(record).reduce((s, v) => s + v, 0);
}

export function formatTraffic(t: Traffic): string {
  const verbs = Object.entries(t.requests)
    .map(([v, n]) => `${v} ${n}`)
    .join(', ');
  const writes = Object.entries(t.statusWrites)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return `requests ${verbs}; status writes ${writes}; conflicts ${t.conflicts}`;
}

/** RegistryService metadata.name → how many endpoints its status must list once everything converged. */
function endpointsPerService(items: readonly Item[]): Map<string, number> {
  const nameOf = (item: Item): string => String((item.body.spec as { name?: unknown } | undefined)?.name ?? '');
  const serviceBySpecName = new Map(
    items.filter((i) => i.body.kind === 'RegistryService').map((i) => [nameOf(i), i.body.metadata.name ?? '']),
  );
  const counts = new Map<string, number>([...serviceBySpecName.values()].map((n) => [n, 0]));
  for (const item of items) {
    if (item.body.kind !== 'RegistryEndpoint') continue;
    const service = serviceBySpecName.get(nameOf(item).replace(/\/endpoints\/[^/]+$/, ''));
    if (service !== undefined) counts.set(service, (counts.get(service) ?? 0) + 1);
  }
  return counts;
}

type ObservedStatus =
  | { conditions?: Array<{ type: string; status: string; observedGeneration?: number }>; endpoints?: unknown[] }
  | undefined;

/**
 * Ready with a current observedGeneration, and for a RegistryService the complete list of its
 * endpoints: a service is Ready as soon as its first endpoint is, and its list is what users read.
 */
function isConverged(obj: KubeObject, expectedEndpoints: ReadonlyMap<string, number>): boolean {
  const status = obj.status as ObservedStatus;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True' || ready.observedGeneration !== obj.metadata.generation) return false;
  return (
    obj.kind !== 'RegistryService' ||
    (status?.endpoints?.length ?? 0) === (expectedEndpoints.get(obj.metadata.name ?? '') ?? 0)
  );
}

function convergedCount(operator: RunningOperator, expectedEndpoints: ReadonlyMap<string, number>): number {
  let converged = 0;
  for (const kind of Object.keys(resources) as Array<keyof typeof resources>) {
    for (const obj of operator.cached(kind)) if (isConverged(obj, expectedEndpoints)) converged++;
  }
  return converged;
}

export interface OperatorUnderBench {
  readonly operator: RunningOperator;
  readonly client: KubeClient;
  stop(): Promise<void>;
}

export async function startBenchOperator(
  kubeconfig: string,
  namespace: string,
  workers: number,
): Promise<OperatorUnderBench> {
  const client = KubeClient.fromKubeconfig(kubeconfig);
  const operator = await startOperator({
    client,
    settings: {
      project: PROJECT,
      location: LOCATION,
      namespaces: [namespace],
      workers,
      leaderElection: { enabled: false, namespace, leaseName: 'bench' },
    },
    log: pino({ level: process.env['BENCH_LOG'] ?? 'warn' }),
  });
  return {
    operator,
    client,
    stop: async () => {
      await operator.stop();
      client.close();
    },
  };
}

export interface ConvergenceResult {
  /** From the first create to the last object Ready, ms. */
  readonly ms: number;
  readonly createdMs: number;
  readonly traffic: Traffic;
}

/**
 * Creates every object with `client` (`concurrency` in flight) while the operator runs, and stops
 * the clock when all are converged. Completion is observed in the operator's own informer caches
 * (what its watches delivered), so measuring adds no watchers and no polling to the apiserver.
 */
export async function convergeWithOperator(
  running: OperatorUnderBench,
  client: KubeClient,
  namespace: string,
  items: readonly Item[],
  concurrency: number,
): Promise<ConvergenceResult> {
  await running.operator.ready;
  const expectedEndpoints = endpointsPerService(items);
  const before = await traffic();
  const started = performance.now();
  await pool(items, concurrency, async (item) => {
    await client.create(item.ref, namespace, item.body);
  });
  const createdMs = performance.now() - started;
  while (convergedCount(running.operator, expectedEndpoints) < items.length)
    await new Promise((r) => setTimeout(r, 50));
  const ms = performance.now() - started;
  return { ms, createdMs, traffic: minus(await traffic(), before) };
}

export interface SteadyStateResult {
  /** From starting the operator to every informer synced, ms. */
  readonly syncMs: number;
  /** From starting the operator to every object reconciled and the queues idle, ms. */
  readonly settledMs: number;
  readonly reconciles: number;
  /** The fresh operator's traffic, its initial lists and watches included (GET). */
  readonly traffic: Traffic;
}

async function totalOf(metric: typeof reconcileTotal | typeof workqueueDepth | typeof activeWorkers): Promise<number> {
  return metricValue(metric);
}

/**
 * B2: starts a fresh operator over `objects` objects that are all Ready, measures when its caches
 * synced, then lets it reconcile every object once and waits until its queues have been idle for
 * `quietMs`, counting every write it sends.
 */
export async function restartInSteadyState(
  kubeconfig: string,
  namespace: string,
  workers: number,
  objects: number,
  quietMs: number,
  timeoutMs: number,
): Promise<SteadyStateResult> {
  const before = await traffic();
  const reconcilesBefore = await totalOf(reconcileTotal);
  const started = performance.now();
  const running = await startBenchOperator(kubeconfig, namespace, workers);
  try {
    await running.operator.ready;
    const syncMs = performance.now() - started;
    let quietSince = performance.now();
    let lastReconciles = -1;
    for (;;) {
      if (performance.now() - started > timeoutMs)
        throw new Error(`steady state: not settled within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
      const reconciles = (await totalOf(reconcileTotal)) - reconcilesBefore;
      const busy = (await totalOf(workqueueDepth)) > 0 || (await totalOf(activeWorkers)) > 0;
      if (busy || reconciles !== lastReconciles) quietSince = performance.now();
      lastReconciles = reconciles;
      if (reconciles >= objects && performance.now() - quietSince >= quietMs) break;
    }
    const settledMs = performance.now() - started - quietMs;
    return { syncMs, settledMs, reconciles: lastReconciles, traffic: minus(await traffic(), before) };
  } finally {
    await running.stop();
  }
}
