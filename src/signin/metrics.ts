/**
 * `endpoint_operator_signin_login_attempts_total{outcome}`: every credential check of the sign-in
 * API (admin, shop and till logins) by how it ended: `success`, `failure` (wrong or unknown
 * credentials), `throttled` (refused by a limit before any verification, answered 429) or
 * `unavailable` (the replicas' shared attempt budget could not be read). What the dashboard's
 * logins panel and the throttling-burst alert read.
 */
import { Counter } from 'prom-client';
import { metricsRegistry } from '../base/metrics.js';

export const loginAttempts = new Counter({
  name: 'endpoint_operator_signin_login_attempts_total',
  help: 'Sign-in credential checks by outcome: success, failure (wrong or unknown credentials), throttled (429 before verification), unavailable.',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

// Every outcome exists from the start, so "throttled per second" reads 0 rather than no data.
for (const outcome of ['success', 'failure', 'throttled', 'unavailable']) loginAttempts.inc({ outcome }, 0);
