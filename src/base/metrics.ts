/**
 * Every runtime metric, in the operator's one Prometheus registry (src/base/metrics-registry.ts).
 * Names follow controller-runtime and client-go so that existing dashboards and alerts
 * (`workqueue_depth`, `controller_runtime_reconcile_total`, ...) work unchanged.
 */
import { Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';
import { metricsRegistry } from './metrics-registry.js';

export { metricsRegistry };

let defaultsCollected = false;
/** Process metrics (CPU, memory, event-loop lag); called once by `run`, not at import, so tests stay cheap. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

export const restClientRequests = new Counter({
  name: 'rest_client_requests_total',
  help: 'Number of HTTP requests to the Kubernetes API server, partitioned by verb and status code ("<error>" when no response arrived).',
  labelNames: ['verb', 'code'] as const,
  registers: [metricsRegistry],
});

export const restClientLatency = new Histogram({
  name: 'rest_client_request_duration_seconds',
  help: 'Latency of requests to the Kubernetes API server (watches excluded), by verb.',
  labelNames: ['verb'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export const workqueueDepth = new Gauge({
  name: 'workqueue_depth',
  help: 'Current depth of the work queue.',
  labelNames: ['name'] as const,
  registers: [metricsRegistry],
});

export const workqueueAdds = new Counter({
  name: 'workqueue_adds_total',
  help: 'Total number of adds handled by the work queue.',
  labelNames: ['name'] as const,
  registers: [metricsRegistry],
});

export const workqueueRetries = new Counter({
  name: 'workqueue_retries_total',
  help: 'Total number of rate-limited (backed-off) retries handled by the work queue.',
  labelNames: ['name'] as const,
  registers: [metricsRegistry],
});

export const workqueueQueueDuration = new Histogram({
  name: 'workqueue_queue_duration_seconds',
  help: 'How long in seconds a key stays in the work queue before being processed.',
  labelNames: ['name'] as const,
  buckets: [0.0001, 0.001, 0.01, 0.1, 1, 10, 100],
  registers: [metricsRegistry],
});

export const workqueueWorkDuration = new Histogram({
  name: 'workqueue_work_duration_seconds',
  help: 'How long in seconds processing a key from the work queue takes.',
  labelNames: ['name'] as const,
  buckets: [0.0001, 0.001, 0.01, 0.1, 1, 10, 100],
  registers: [metricsRegistry],
});

export const reconcileTotal = new Counter({
  name: 'controller_runtime_reconcile_total',
  help: 'Total number of reconciliations per controller, by result (success, error, requeue, requeue_after).',
  labelNames: ['controller', 'result'] as const,
  registers: [metricsRegistry],
});

export const reconcileErrors = new Counter({
  name: 'controller_runtime_reconcile_errors_total',
  help: 'Total number of reconciliation errors per controller, by error kind (the ApiError reason or the error class).',
  labelNames: ['controller', 'kind'] as const,
  registers: [metricsRegistry],
});

export const reconcilePanics = new Counter({
  name: 'controller_runtime_reconcile_panics_total',
  help: 'Reconciles that threw something that is not an Error (a bug); the process keeps running.',
  labelNames: ['controller'] as const,
  registers: [metricsRegistry],
});

export const reconcileTime = new Histogram({
  name: 'controller_runtime_reconcile_time_seconds',
  help: 'Length of time per reconciliation per controller.',
  labelNames: ['controller'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [metricsRegistry],
});

export const activeWorkers = new Gauge({
  name: 'controller_runtime_active_workers',
  help: 'Number of workers currently reconciling, per controller.',
  labelNames: ['controller'] as const,
  registers: [metricsRegistry],
});

export const statusWrites = new Counter({
  name: 'endpoint_operator_status_writes_total',
  help: 'Status subresource writes sent to the API server, by kind (unchanged status is never written).',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const statusConflicts = new Counter({
  name: 'endpoint_operator_status_conflicts_total',
  help: 'Status writes that hit a 409 Conflict and were retried with a fresh read, by kind.',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
});

export const informerRelists = new Counter({
  name: 'endpoint_operator_informer_relists_total',
  help: 'Full relists per informer, by reason (initial, expired, error).',
  labelNames: ['resource', 'reason'] as const,
  registers: [metricsRegistry],
});

export const informerWatchRestarts = new Counter({
  name: 'endpoint_operator_informer_watch_restarts_total',
  help: 'Watch streams restarted per informer, by reason (closed, error, stalled).',
  labelNames: ['resource', 'reason'] as const,
  registers: [metricsRegistry],
});

export const leaderStatus = new Gauge({
  name: 'leader_election_master_status',
  help: 'Whether this replica currently holds the lease (1) or not (0).',
  labelNames: ['name'] as const,
  registers: [metricsRegistry],
});
