/**
 * The gateway's Prometheus metrics, in the process's one registry (served on /metrics with the
 * runtime's). Labels are bounded by the cluster's objects: namespace, endpoint (metadata.name),
 * deployed model (id and name), method and HTTP code.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from '../base/metrics.js';

/**
 * `deployed_model_name` (the DeployedModel's metadata.name, 1:1 with its id) lets a custom-metrics adapter
 * serve a model's calls per minute as a metric of that object, which its HPA scales on (docs/autoscaling.md).
 */
export const gatewayRequests = new Counter({
  name: 'endpoint_operator_gateway_requests_total',
  help: 'Prediction calls answered by the gateway, by namespace, endpoint, deployed model id and DeployedModel name ("" when none was chosen), method and HTTP code.',
  labelNames: ['namespace', 'endpoint', 'deployed_model', 'deployed_model_name', 'method', 'code'] as const,
  registers: [metricsRegistry],
});

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const gatewayRequestDuration = new Histogram({
  name: 'endpoint_operator_gateway_request_duration_seconds',
  help: 'Whole prediction calls as the gateway saw them (body read to answer written), by namespace, endpoint and method.',
  labelNames: ['namespace', 'endpoint', 'method'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const gatewayUpstreamDuration = new Histogram({
  name: 'endpoint_operator_gateway_upstream_duration_seconds',
  help: 'Model server exchanges (retry included), by namespace, endpoint and deployed model.',
  labelNames: ['namespace', 'endpoint', 'deployed_model'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

/** How a call reached the API port: `grpc` (gRPC, gRPC-Web and Connect) or `rest` (every other request). */
export type CallProtocol = 'rest' | 'grpc';

/**
 * Calls on the API port now being answered, every route and transport (prediction calls, Endpoint reads, registry
 * lookups): a replica's load at a glance, and what an autoscaler can read per pod. Named and kept as Prometheus'
 * promhttp `InstrumentHandlerInFlight` and controller-runtime's `controller_runtime_webhook_requests_in_flight`: a
 * gauge raised when the request arrives and lowered when its answer ends or its connection goes.
 */
export const gatewayInFlight = new Gauge({
  name: 'endpoint_operator_gateway_requests_in_flight',
  help: 'Calls on the gateway API port being answered now (arrived, answer not yet ended), by protocol: grpc (gRPC, gRPC-Web, Connect) or rest.',
  labelNames: ['protocol'] as const,
  registers: [metricsRegistry],
});
// Both series exist from the start, at 0, as controller-runtime initialises its metrics: a query never finds none.
for (const protocol of ['rest', 'grpc'] satisfies CallProtocol[]) gatewayInFlight.labels(protocol).set(0);

/**
 * Counts `res`'s call in flight until its answer has ended or its connection is gone: Node emits `close` once on a
 * response either way (HTTP/1.1 and HTTP/2 alike), so every call raised is lowered exactly once.
 */
export function countInFlight(
  protocol: CallProtocol,
  res: { once(event: 'close', listener: () => void): unknown },
): void {
  const gauge = gatewayInFlight.labels(protocol);
  gauge.inc();
  res.once('close', () => gauge.dec());
}

export const gatewayUpstreamRetries = new Counter({
  name: 'endpoint_operator_gateway_upstream_retries_total',
  help: 'Calls retried on another model server endpoint after a failure before any byte of them was written (a refused connect).',
  registers: [metricsRegistry],
});

export const gatewayUpstreamResets = new Counter({
  name: 'endpoint_operator_gateway_upstream_resets_total',
  help: 'Calls sent to a model server whose connection then failed before an answer: answered 503 UNAVAILABLE, not retried (not idempotent).',
  registers: [metricsRegistry],
});

export const gatewayEjections = new Counter({
  name: 'endpoint_operator_gateway_outlier_ejections_total',
  help: 'Model server endpoints ejected from balancing by passive outlier detection.',
  registers: [metricsRegistry],
});
