/**
 * The webhook server's metrics under controller-runtime's names (pkg/webhook/internal/metrics), so
 * dashboards and alerts written for kubebuilder operators work unchanged, and the serving
 * certificate's expiry under cert-manager's shape (`certmanager_certificate_expiration_timestamp_seconds`).
 */
import 'reflect-metadata'; // @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import * as x509 from '@peculiar/x509';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { AnyResponse } from '../http/request-types.js';
import { metricsRegistry } from '../base/metrics.js';

export const webhookLatency = new Histogram({
  name: 'controller_runtime_webhook_latency_seconds',
  help: 'Histogram of the latency of processing admission and conversion requests, by webhook path.',
  labelNames: ['webhook'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export const webhookRequests = new Counter({
  name: 'controller_runtime_webhook_requests_total',
  help: 'Total number of admission and conversion requests by webhook path and HTTP status code.',
  labelNames: ['webhook', 'code'] as const,
  registers: [metricsRegistry],
});

export const webhookInFlight = new Gauge({
  name: 'controller_runtime_webhook_requests_in_flight',
  help: 'Current number of admission and conversion requests being served, by webhook path.',
  labelNames: ['webhook'] as const,
  registers: [metricsRegistry],
});

const certificateExpiry = new Gauge({
  name: 'endpoint_operator_webhook_certificate_expiration_timestamp_seconds',
  help: 'When the webhook serving certificate this replica presents expires (Unix seconds); renewal replaces it at two thirds of its lifetime.',
  registers: [metricsRegistry],
});

/** Counts one request to a webhook path and observes its latency when its answer is sent (or the connection drops). */
export function trackWebhookRequest(webhook: string, res: AnyResponse): void {
  const started = performance.now();
  webhookInFlight.inc({ webhook });
  res.once('close', () => {
    webhookInFlight.dec({ webhook });
    webhookLatency.observe({ webhook }, (performance.now() - started) / 1000);
    webhookRequests.inc({ webhook, code: String(res.statusCode) });
  });
}

/** Records the expiry of the serving certificate now presented (the first PEM block of `certPem`). */
export function recordServingCertificate(certPem: string): void {
  certificateExpiry.set(new x509.X509Certificate(certPem).notAfter.getTime() / 1000);
}
