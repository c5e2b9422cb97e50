/**
 * B4, what the CRDs' CEL rules cost: the apiserver's create latency of the convergence workload (4,010
 * objects), and the admission webhook's latency while it runs, with the CRDs as generated and with every
 * `x-kubernetes-validations` rule taken out, in one run on one cluster. The arms run without, with, with,
 * without, each into a fresh namespace, so a drift that grows with the run (etcd's size, the machine) falls on both.
 *
 *   npx tsx bench/cel-writes.ts        (BENCH_ENDPOINTS, BENCH_REGISTRY_ENDPOINTS, BENCH_CONCURRENCY)
 */
import { performance } from 'node:perf_hooks';
import { allKinds } from '../src/api/kinds.js';
import { crdFor, type CustomResourceDefinition } from '../src/api/crd/generate.js';
import type { JSONSchemaProps } from '../src/api/crd/openapi.js';
import { CRD_REF } from '../src/operator/crds.js';
import type { KubeClient } from '../src/kube/kube-client.js';
import { webhookLatency } from '../src/webhook/metrics.js';
import { startBenchWebhooks } from './convergence/webhooks.js';
import { pool, workload } from './convergence/workload.js';
import { recordResults } from './results.js';
import { NAMESPACES, withBenchCluster } from './bench-cluster.js';

const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 1000);
const REGISTRY_ENDPOINTS = Number(process.env['BENCH_REGISTRY_ENDPOINTS'] ?? 1000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const TIMEOUT_S = Number(process.env['BENCH_TIMEOUT_S'] ?? 900);

type Arm = 'without CEL' | 'with CEL';

/** A copy of a schema without any CEL rule. */
function withoutCel(schema: JSONSchemaProps): JSONSchemaProps {
  const { 'x-kubernetes-validations': _rules, properties, items, additionalProperties, ...rest } = schema;
  return {
    ...rest,
    ...(properties === undefined
      ? {}
      : { properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, withoutCel(v)])) }),
    ...(items === undefined ? {} : { items: withoutCel(items) }),
    ...(typeof additionalProperties === 'object'
      ? { additionalProperties: withoutCel(additionalProperties) }
      : additionalProperties === undefined
        ? {}
        : { additionalProperties }),
  };
}

function crdsFor(arm: Arm): CustomResourceDefinition[] {
  return allKinds.map((def) => {
    const crd = crdFor(def, { conversion: { url: 'https://127.0.0.1:9/convert' } });
    if (arm === 'with CEL') return crd;
    const versions = (crd.spec.versions as { schema: { openAPIV3Schema: JSONSchemaProps } }[]).map((v) => ({
      ...v,
      schema: { openAPIV3Schema: withoutCel(v.schema.openAPIV3Schema) },
    }));
    return { ...crd, spec: { ...crd.spec, versions } };
  });
}

/** Replaces the CRDs' schemas (keeping the conversion the webhook installer wrote), then waits until a write sees them. */
async function useCrds(client: KubeClient, arm: Arm, probeNamespace: string): Promise<void> {
  for (const crd of crdsFor(arm)) {
    const current = await client.get<{ metadata: { resourceVersion: string }; spec: { conversion?: unknown } }>(
      CRD_REF,
      undefined,
      crd.metadata.name,
    );
    const spec = {
      ...crd.spec,
      ...(crd.spec.conversion !== undefined && current?.spec.conversion !== undefined
        ? { conversion: current.spec.conversion }
        : {}),
    };
    await client.replace(CRD_REF, undefined, crd.metadata.name, {
      ...crd,
      metadata: { ...crd.metadata, resourceVersion: current?.metadata.resourceVersion },
      spec,
    });
  }
  // The apiserver swaps a CRD's validators a moment after the update: a split summing to 50 is refused by CEL only.
  const probe = {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'cel-probe' },
    spec: { displayName: 'probe', trafficSplit: { '1': 50 } },
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const refusedByCel = await client
      .create(
        { group: 'prediction.endpoint-operator.dev', version: 'v1', plural: 'predictionendpoints', namespaced: true },
        probeNamespace,
        probe,
        { dryRun: true },
      )
      .then(
        () => false,
        (err: unknown) =>
          String(err).includes('percentages must sum to exactly 100') && !String(err).includes('admission webhook'),
      );
    if (refusedByCel === (arm === 'with CEL')) return;
    if (Date.now() > deadline) throw new Error(`the CRDs ${arm} did not take effect within 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The webhook histogram's upper bound under which `p`% of the observations since `before` fall, ms. */
async function webhookPercentile(before: Map<string, number>, p: number): Promise<{ ms: number; count: number }> {
  const now = await bucketCounts();
  let total = 0;
  for (const [le, c] of now) if (le === '+Inf') total = c - (before.get(le) ?? 0);
  for (const [le, c] of now) {
    if (c - (before.get(le) ?? 0) >= (p / 100) * total)
      return { ms: le === '+Inf' ? Infinity : Number(le) * 1000, count: total };
  }
  return { ms: NaN, count: total };
}

/** Cumulative bucket counts of the admission paths (conversion left out), summed over paths, by `le`. */
async function bucketCounts(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const v of (await webhookLatency.get()).values) {
    if (
      v.metricName !== 'controller_runtime_webhook_latency_seconds_bucket' ||
      String(v.labels['webhook']).includes('convert')
    )
      continue;
    const le = String((v.labels as Record<string, string | number | undefined>)['le']);
    counts.set(le, (counts.get(le) ?? 0) + v.value);
  }
  return new Map(
    [...counts].sort((a, b) => (a[0] === '+Inf' ? 1 : b[0] === '+Inf' ? -1 : Number(a[0]) - Number(b[0]))),
  );
}

async function round(client: KubeClient, arm: Arm, ns: string): Promise<number[]> {
  await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const latencies: number[] = [];
  await pool(workload({ endpoints: ENDPOINTS, registryEndpoints: REGISTRY_ENDPOINTS }), CONCURRENCY, async (item) => {
    const t0 = performance.now();
    await client.create(item.ref, ns, item.body);
    latencies.push(performance.now() - t0);
  });
  console.log(`  ${arm}: ${latencies.length} creates into ${ns}`);
  return latencies;
}

async function main(): Promise<void> {
  const stop = new AbortController();
  await withBenchCluster(TIMEOUT_S, ['bench-system', 'bench-probe'], async ({ client }) => {
    try {
      const webhooks = await startBenchWebhooks(client, 'bench-system', 'bench-probe', stop.signal);
      const latencies: Record<Arm, number[]> = { 'without CEL': [], 'with CEL': [] };
      const webhookP99: Record<Arm, number[]> = { 'without CEL': [], 'with CEL': [] };
      // Unmeasured: connections, TLS sessions and the apiserver's first-use work.
      await useCrds(client, 'with CEL', 'bench-probe');
      await round(client, 'with CEL', 'bench-warmup');
      for (const [i, arm] of (['without CEL', 'with CEL', 'with CEL', 'without CEL'] as const).entries()) {
        await useCrds(client, arm, 'bench-probe');
        const before = await bucketCounts();
        latencies[arm].push(...(await round(client, arm, `bench-${i}`)));
        webhookP99[arm].push((await webhookPercentile(before, 99)).ms);
      }
      const summary = (arm: Arm) => {
        const sorted = [...latencies[arm]].sort((a, b) => a - b);
        return {
          n: sorted.length,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          webhookP99: Math.max(...webhookP99[arm]),
        };
      };
      const off = summary('without CEL');
      const on = summary('with CEL');
      for (const [arm, s] of [
        ['without CEL', off],
        ['with CEL', on],
      ] as const) {
        console.log(
          `B4 CEL, ${arm}: create p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms over ${s.n} creates; admission webhook p99 ≤ ${s.webhookP99} ms (histogram bucket)`,
        );
      }
      const p99Ratio = on.p99 / off.p99;
      console.log(`B4 CEL: create p99 with ÷ without = ${p99Ratio.toFixed(3)}; p50 ${(on.p50 / off.p50).toFixed(3)}`);
      const conditions = `${off.n / 2} objects per round, two rounds per arm (without, with, with, without), ${CONCURRENCY} creates in flight, admission webhooks on`;
      recordResults([
        {
          id: 'B4.cel.create_p99_ratio',
          name: 'apiserver create latency p99: CRDs with their CEL rules ÷ the same CRDs without',
          value: Number(p99Ratio.toFixed(3)),
          unit: 'ratio',
          baseline: { value: Number(off.p99.toFixed(2)), name: 'create p99 without CEL, ms' },
          ratio: Number(p99Ratio.toFixed(3)),
          notes: conditions,
        },
        {
          id: 'B4.cel.create_p99',
          name: 'apiserver create latency p99 with the CEL rules',
          value: Number(on.p99.toFixed(2)),
          unit: 'ms',
          notes: conditions,
        },
        {
          id: 'B4.cel.create_p50_ratio',
          name: 'apiserver create latency p50: with CEL ÷ without',
          value: Number((on.p50 / off.p50).toFixed(3)),
          unit: 'ratio',
          baseline: { value: Number(off.p50.toFixed(2)), name: 'create p50 without CEL, ms' },
          ratio: Number((on.p50 / off.p50).toFixed(3)),
        },
        {
          id: 'B4.cel.webhook_p99',
          name: 'admission webhook latency p99 during the creates (histogram bucket bound), with CEL | without',
          value: on.webhookP99,
          unit: 'ms',
          baseline: { value: off.webhookP99, name: 'without CEL, ms' },
          notes: conditions,
        },
      ]);
      await webhooks.close();
    } finally {
      stop.abort();
    }
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
