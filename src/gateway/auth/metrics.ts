/**
 * The gateway's authentication and authorization metrics (names fixed with the alerts and dashboard
 * that read them). Labels are bounded enums: never a user name, a group or a token.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from '../../base/metrics.js';

export const authEnabled = new Gauge({
  name: 'endpoint_operator_gateway_auth_enabled',
  help: '1 when the gateway authenticates and authorises calls (TokenReview + SubjectAccessReview), 0 when it runs with --auth=none.',
  registers: [metricsRegistry],
});

export const authDecisions = new Counter({
  name: 'endpoint_operator_gateway_auth_decisions_total',
  help: 'Authentication/authorization decisions, by call (predict, rawPredict, explain, resolve, getService, listEndpoints, metrics) and outcome (allowed, unauthenticated, forbidden, unavailable, throttled).',
  labelNames: ['call', 'outcome'] as const,
  registers: [metricsRegistry],
});

export const authReviews = new Counter({
  name: 'endpoint_operator_gateway_auth_reviews_total',
  help: 'TokenReviews (review="token") and SubjectAccessReviews (review="access") sent to the kube-apiserver, by result (ok, or error when it could not answer: network error, 5xx, timeout).',
  labelNames: ['review', 'result'] as const,
  registers: [metricsRegistry],
});
// Every result starts at 0 (as controller-runtime does for its reconcile results), so the error ratio
// the alert reads exists, at 0, in a healthy gateway instead of being an absent series.
for (const review of ['token', 'access'] as const)
  for (const result of ['ok', 'error'] as const) authReviews.inc({ review, result }, 0);

export const authReviewDuration = new Histogram({
  name: 'endpoint_operator_gateway_auth_review_duration_seconds',
  help: 'Latency of TokenReviews (review="token") and SubjectAccessReviews (review="access") at the kube-apiserver.',
  labelNames: ['review'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

export const authCacheRequests = new Counter({
  name: 'endpoint_operator_gateway_auth_cache_requests_total',
  help: 'Look-ups in the token and access decision caches, by cache (token, access) and result (hit, miss).',
  labelNames: ['cache', 'result'] as const,
  registers: [metricsRegistry],
});

export const authCacheEntries = new Gauge({
  name: 'endpoint_operator_gateway_auth_cache_entries',
  help: 'Entries held in the token and access decision caches, by cache (token, access).',
  labelNames: ['cache'] as const,
  registers: [metricsRegistry],
});

export type ReviewKind = 'token' | 'access';
