import { Gauge } from 'prom-client';
import { metricsRegistry } from '../../base/metrics.js';
import type { KubernetesSessionStore } from './sessions.js';

/** Every running store (tests run two replicas in one process); the gauge sums them at scrape time. */
const stores = new Set<KubernetesSessionStore>();

new Gauge({
  name: 'signin_sessions',
  help: 'SignInSession refresh families in the sign-in watch cache, by state (active, revoked: kept until their access tokens expire, expired: awaiting deletion).',
  labelNames: ['state'] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const store of stores) {
      const counts = store.countFamilies();
      for (const state of ['active', 'revoked', 'expired'] as const) this.inc({ state }, counts[state]);
    }
  },
});

/** Counts `store` in `signin_sessions` until the returned function is called. */
export function reportSessions(store: KubernetesSessionStore): () => void {
  stores.add(store);
  return () => stores.delete(store);
}
