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

export const gatewayInFlight = new Gauge({
  name: 'endpoint_operator_gateway_requests_in_flight',
  help: 'Prediction calls being answered now.',
  registers: [metricsRegistry],
});

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
