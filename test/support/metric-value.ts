/**
 * A metric's value as the process holds it, read through prom-client's own `get()` of the metric object src/ exports
 * (what /metrics renders): the sum over the children whose labels include `labels`.
 */
import type { Counter, Gauge } from 'prom-client';

/** `metricValue(statusWrites, { kind: 'Shop' })` */
export async function metricValue(
  metric: Counter<string> | Gauge<string>,
  labels: Record<string, string> = {},
): Promise<number> {
  const data = await metric.get();
  let sum = 0;
  for (const v of data.values) {
    if (Object.entries(labels).every(([k, want]) => v.labels[k] === want)) sum += v.value;
  }
  return sum;
}
