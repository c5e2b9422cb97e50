/**
 * Convergence benchmark (B1) and steady-state restart (B2).
 *
 *   npx tsx bench/convergence.ts     (BENCH_ENDPOINTS, BENCH_REGISTRY_ENDPOINTS, BENCH_CONCURRENCY to scale)
 *
 * On a fresh local control plane (real etcd + kube-apiserver, watch cache on as in production):
 * - B1 baseline, in its own namespace: a bare client creates every object and writes its final
 *   status once, CONCURRENCY requests in flight;
 * - B1 operator, in another namespace: the same objects are created the same way while the operator
 *   runs in-process; the clock stops when every object is Ready with a current observedGeneration.
 *   Goal: operator time ≤ 1.25 × baseline time;
 * - B2: the operator is stopped and a fresh one started over the converged namespace: time until
 *   its caches are synced, and the writes it sends while it re-reconciles everything (goal: none).
 * Objects: N PredictionEndpoints with two DeployedModels each and a 70/30 split, and M
 * RegistryEndpoints under 10 RegistryServices. Wall time on a shared 2-core machine moves with
 * whatever else runs, so CPU seconds of kube-apiserver, etcd and this process are reported per
 * phase too. Bounded by BENCH_TIMEOUT_S (default 900).
 */
import { withBenchCluster } from './bench-cluster.js';
import {
  convergeWithOperator,
  formatTraffic,
  restartInSteadyState,
  startBenchOperator,
  sum,
} from './convergence/operator-phases.js';
import { removeBenchWebhooks, startBenchWebhooks } from './convergence/webhooks.js';
import { baseline, SERVICES, workload } from './convergence/workload.js';
import { cpuDelta, cpuSampler, formatCpu, type CpuSample } from './process-cpu.js';
import { recordResults } from './results.js';

const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 1000);
const REGISTRY_ENDPOINTS = Number(process.env['BENCH_REGISTRY_ENDPOINTS'] ?? 1000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
/** Concurrent reconciles per controller (four controllers). */
const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 16);
const TIMEOUT_S = Number(process.env['BENCH_TIMEOUT_S'] ?? 900);
/** B2 counts writes until the fresh operator's queues have been idle this long. */
const QUIET_MS = 3_000;
/** BENCH_WEBHOOKS=0 runs both phases without the admission webhooks (then every finalizer is a PATCH). */
const WEBHOOKS = process.env['BENCH_WEBHOOKS'] !== '0';

const seconds = (ms: number): number => Number((ms / 1000).toFixed(2));
const cpuDetails = (c: CpuSample): Record<string, number> => ({
  apiserver: Number(c.apiserver.toFixed(1)),
  etcd: Number(c.etcd.toFixed(1)),
  controllers: Number(c.controllers.toFixed(1)),
  benchProcess: Number(c.self.toFixed(1)),
});

async function main(): Promise<number> {
  const items = workload({ endpoints: ENDPOINTS, registryEndpoints: REGISTRY_ENDPOINTS });
  const conditions = `${items.length} objects, ${CONCURRENCY} requests in flight, ${WORKERS} workers per controller, admission webhooks ${WEBHOOKS ? 'on' : 'off'}`;
  console.log(
    `convergence benchmark: ${ENDPOINTS} PredictionEndpoints (+${2 * ENDPOINTS} DeployedModels), ${REGISTRY_ENDPOINTS} RegistryEndpoints under ${SERVICES} RegistryServices = ${conditions}`,
  );
  const stopWebhooks = new AbortController();
  return withBenchCluster(
    TIMEOUT_S,
    ['bench-warmup', 'bench-baseline', 'bench-operator', 'bench-system', 'bench-probe', 'bench-bare'],
    async ({ plane, client }) => {
      try {
        const webhooks = WEBHOOKS
          ? await startBenchWebhooks(client, 'bench-system', 'bench-probe', stopWebhooks.signal)
          : undefined;
        const cpu = cpuSampler(plane.dataDir);
        // Unmeasured: connections, TLS sessions and the API server's first-use work would otherwise all be billed to the baseline.
        await baseline(
          client,
          'bench-warmup',
          items.slice(0, Math.max(50, Math.round(items.length / 20))),
          CONCURRENCY,
        );

        const cpuBase0 = cpu();
        const baseMs = await baseline(client, 'bench-baseline', items, CONCURRENCY);
        const cpuBase = cpuDelta(cpuBase0, cpu());
        console.log(
          `  baseline: ${(baseMs / 1000).toFixed(2)} s (create + one status write per object); ${formatCpu(cpuBase)}`,
        );

        const running = await startBenchOperator(plane.kubeconfigPath, 'bench-operator', WORKERS);
        const cpuOp0 = cpu();
        const op = await convergeWithOperator(running, client, 'bench-operator', items, CONCURRENCY);
        const cpuOp = cpuDelta(cpuOp0, cpu());
        await running.stop();
        const ratio = op.ms / baseMs;
        const cpuRatio = cpuOp.apiserver / cpuBase.apiserver;
        const writes = sum(op.traffic.statusWrites);
        console.log(
          `  operator: all created after ${(op.createdMs / 1000).toFixed(2)} s, all Ready after ${(op.ms / 1000).toFixed(2)} s`,
        );
        console.log(`  operator: ${formatTraffic(op.traffic)} (creates by the bench client included)`);
        console.log(`  operator: ${formatCpu(cpuOp)}; kube-apiserver CPU ratio ${cpuRatio.toFixed(3)}`);
        console.log(
          `B1: baseline ${(baseMs / 1000).toFixed(2)} s, operator ${(op.ms / 1000).toFixed(2)} s, ratio ${ratio.toFixed(3)} (goal <= 1.25)`,
        );
        recordResults(
          [
            {
              id: 'B1.convergence.ratio',
              name: `time until ${items.length} objects are Ready: operator ÷ bare client`,
              value: Number(ratio.toFixed(3)),
              unit: 'ratio',
              goal: { op: '<=', value: 1.25 },
              baseline: { value: seconds(baseMs), name: 'bare client: create + one status write per object, s' },
              ratio: Number(ratio.toFixed(3)),
              notes: conditions,
            },
            {
              id: 'B1.convergence.operator',
              name: 'time until every object is Ready with a current observedGeneration',
              value: seconds(op.ms),
              unit: 's',
              notes: `all created after ${seconds(op.createdMs)} s`,
            },
            {
              id: 'B1.convergence.apiserver_cpu_ratio',
              name: 'kube-apiserver CPU seconds: operator phase ÷ baseline phase',
              value: Number(cpuRatio.toFixed(3)),
              unit: 'ratio',
              baseline: { value: Number(cpuBase.apiserver.toFixed(1)), name: 'kube-apiserver CPU s, baseline' },
            },
            {
              id: 'B1.convergence.status_writes',
              name: 'status writes by the operator',
              value: writes,
              unit: 'writes',
              baseline: { value: items.length, name: 'one per object' },
              ratio: Number((writes / items.length).toFixed(3)),
            },
          ],
          {
            convergence: {
              operatorTraffic: op.traffic,
              cpuSeconds: { baseline: cpuDetails(cpuBase), operator: cpuDetails(cpuOp) },
            },
          },
        );

        const cpuSteady0 = cpu();
        const steady = await restartInSteadyState(
          plane.kubeconfigPath,
          'bench-operator',
          WORKERS,
          items.length,
          QUIET_MS,
          120_000,
        );
        const cpuSteady = cpuDelta(cpuSteady0, cpu());
        const steadyWrites = steady.traffic.requests;
        const mutating =
          (steadyWrites['POST'] ?? 0) +
          (steadyWrites['PATCH'] ?? 0) +
          (steadyWrites['PUT'] ?? 0) +
          (steadyWrites['DELETE'] ?? 0);
        console.log(
          `B2: restart over ${items.length} Ready objects: caches synced after ${(steady.syncMs / 1000).toFixed(2)} s, ${steady.reconciles} reconciles done after ${(steady.settledMs / 1000).toFixed(2)} s`,
        );
        console.log(`  restart: ${formatTraffic(steady.traffic)}; ${formatCpu(cpuSteady)}`);
        recordResults(
          [
            {
              id: 'B2.steady.status_writes',
              name: 'status writes after a restart with everything Ready',
              value: sum(steady.traffic.statusWrites),
              unit: 'writes',
              goal: { op: '==', value: 0 },
              notes: `${steady.reconciles} reconciles of ${items.length} objects`,
            },
            {
              id: 'B2.steady.writes',
              name: 'write requests of any kind (POST/PATCH/PUT/DELETE) after that restart',
              value: mutating,
              unit: 'requests',
              goal: { op: '==', value: 0 },
            },
            {
              id: 'B2.steady.cache_sync',
              name: `time from start until every informer synced (${items.length} objects)`,
              value: seconds(steady.syncMs),
              unit: 's',
            },
            {
              id: 'B2.steady.settled',
              name: 'time from start until every object was reconciled and the queues were idle',
              value: seconds(steady.settledMs),
              unit: 's',
            },
          ],
          { steadyState: { traffic: steady.traffic, cpuSeconds: cpuDetails(cpuSteady) } },
        );

        if (webhooks !== undefined) {
          // What the operator costs as a whole, admission included: the same bare client on the same
          // cluster without the operator's webhooks, against the operator phase above.
          await removeBenchWebhooks(client, webhooks, 'bench-probe');
          const cpuBare0 = cpu();
          const bareMs = await baseline(client, 'bench-bare', items, CONCURRENCY);
          const cpuBare = cpuDelta(cpuBare0, cpu());
          const wholeRatio = op.ms / bareMs;
          console.log(
            `  bare client without the admission webhooks: ${(bareMs / 1000).toFixed(2)} s; ${formatCpu(cpuBare)}`,
          );
          console.log(
            `B1 including admission: operator with its webhooks ${(op.ms / 1000).toFixed(2)} s ÷ bare client without them ${(bareMs / 1000).toFixed(2)} s = ${wholeRatio.toFixed(3)}`,
          );
          recordResults(
            [
              {
                id: 'B1.convergence.ratio_incl_admission',
                name: 'operator phase (webhooks on) ÷ the bare client on the cluster without the webhooks: what installing the operator costs, admission included',
                value: Number(wholeRatio.toFixed(3)),
                unit: 'ratio',
                baseline: { value: seconds(bareMs), name: 'bare client, no admission webhooks, s' },
                ratio: Number(wholeRatio.toFixed(3)),
              },
            ],
            {
              convergence: {
                operatorTraffic: op.traffic,
                cpuSeconds: {
                  baseline: cpuDetails(cpuBase),
                  operator: cpuDetails(cpuOp),
                  bareWithoutWebhooks: cpuDetails(cpuBare),
                },
              },
            },
          );
        }
        return 0;
      } finally {
        stopWebhooks.abort();
      }
    },
  );
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
