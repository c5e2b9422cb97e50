/**
 * The process's one Prometheus registry. Every layer registers its metrics here (the runtime's in
 * src/base/metrics.ts, the HTTP servers' in src/http), so it sits below them all and imports nothing.
 */
import { Registry } from 'prom-client';

export const metricsRegistry = new Registry();
