/**
 * B3 memory: the operator's resident memory with 10,000 objects in its caches (goal ≤ 150 MB), and
 * its heap under 10 minutes of steady churn (goal: no growth trend).
 *
 *   npx tsx bench/memory.ts     (after `npm run build`: the compiled operator is what is measured)
 *   knobs: BENCH_MEMORY_OBJECTS (10000), BENCH_CHURN_S (600), BENCH_CHURN_RATE (10 actions/s),
 *          BENCH_SAMPLE_S (10), BENCH_PROBE_S (30), BENCH_CONCURRENCY (16), BENCH_WORKERS (4),
 *          BENCH_CONVERGE_TIMEOUT_S (600), BENCH_MEMORY_TIMEOUT_S (whole run),
 *          BENCH_NODE_FLAGS (flags for the operator's node after the chart's, e.g. "--no-optimize-for-size"; with
 *          "--heapsnapshot-signal=SIGUSR1 --diagnostic-dir=DIR", `kill -USR1 <operator pid>` writes a heap snapshot)
 *
 * On a fresh local control plane (real etcd + kube-apiserver with its watch cache, CRDs whose
 * conversion URL is a closed port: only v1 objects are written):
 * 1. the objects are created while no operator runs (a quarter PredictionEndpoints, half
 *    DeployedModels, 10 RegistryServices, the rest RegistryEndpoints), then `endpoint-operator run`
 *    starts as its own process: the worst case of a restart, a full list of everything at once;
 * 2. once every object is Ready for its generation (seen through this process's own watches) and
 *    the work queues are empty, RSS is read from /proc (B3.rss);
 * 3. churn at a fixed rate for BENCH_CHURN_S (see memory/churn.ts), sampling /metrics and /proc
 *    every BENCH_SAMPLE_S and the live heap after a forced full GC every BENCH_PROBE_S; the trend
 *    is judged on the live heap (see memory/trend.ts);
 * 4. the churn stops, everything converges again, RSS and heap are read once more.
 * Bounded by BENCH_MEMORY_TIMEOUT_S; the operator's process group and the control plane are ended
 * in every case (watchdogs end them even if this process is killed).
 */
import { allKinds } from '../src/api/kinds.js';
import { startControlPlane, type ControlPlane } from '../dev/cluster/index.js';
import { installCrds } from '../src/operator/crds.js';
import { KubeClient } from '../src/kube/kube-client.js';
import { Churn } from './memory/churn.js';
import { OperatorUnderTest, operatorNodeFlags, staleBuildFiles, type HeapProbe } from './memory/operator-under-test.js';
import { describe, ReadinessTracker } from './memory/readiness.js';
import { residentBreakdown } from './memory/resident-breakdown.js';
import { memoryBudgetSeconds, memorySettings } from './memory/settings.js';
import { judgeTrend, leastSquares, windowFloors, type Point } from './memory/trend.js';
import { createAll, initialWorkload, shapeOf } from './memory/workload.js';
import { recordResults, type ResultEntry } from './results.js';

const NAMESPACE = 'bench-memory';
const MB = 1e6;
const settings = memorySettings();
const shape = shapeOf(settings.objects);
const mb = (bytes: number): number => Number((bytes / MB).toFixed(1));

/** V8's heap spaces as the probe saw them, committed and in use (MB), before its full GC and after it. */
function describeHeapSpaces(probe: HeapProbe): { space: string; before: string; after: string }[] {
  return probe.spacesBefore.map((b) => {
    const a = probe.spacesAfter.find((s) => s.name === b.name);
    return {
      space: b.name,
      before: `${mb(b.committedBytes)} (${mb(b.usedBytes)} in use)`,
      after: a === undefined ? '?' : `${mb(a.committedBytes)} (${mb(a.usedBytes)} in use)`,
    };
  });
}

function printHeapSpaces(probe: HeapProbe): void {
  for (const s of describeHeapSpaces(probe)) console.log(`    ${s.space}: ${s.before} → after a full GC ${s.after} MB`);
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const elapsed = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

interface Sample {
  readonly t: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number | undefined;
  readonly workqueueDepth: number | undefined;
}

/** Waits until every work queue is empty twice in a row, a second apart: converged and idle, not between two bursts. */
async function waitIdle(operator: OperatorUnderTest, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let idle = 0;
  while (idle < 2) {
    if (performance.now() > deadline) throw new Error(`work queues not empty within ${timeoutMs / 1000} s`);
    // No sample at all: no queue has held a key yet (a labelled gauge has no series until first set).
    const depth = (await operator.metrics(['workqueue_depth']))['workqueue_depth'] ?? 0;
    idle = depth === 0 ? idle + 1 : 0;
    await sleep(1000);
  }
}

/** The median of three /proc readings two seconds apart (RSS moves a little as the allocator returns pages). */
async function steadyRss(operator: OperatorUnderTest): Promise<{ rssBytes: number; peakRssBytes: number }> {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(2000);
    readings.push(operator.procMemory().rssBytes);
  }
  return { rssBytes: [...readings].sort((a, b) => a - b)[1] ?? NaN, peakRssBytes: operator.procMemory().peakRssBytes };
}

async function cpuSeconds(operator: OperatorUnderTest): Promise<number> {
  const cpu = (await operator.metrics(['process_cpu_seconds_total']))['process_cpu_seconds_total'];
  if (cpu === undefined) throw new Error('the operator exports no process_cpu_seconds_total');
  return cpu;
}

async function sample(operator: OperatorUnderTest, t: number): Promise<Sample> {
  const m = await operator.metrics(['nodejs_heap_size_used_bytes', 'workqueue_depth']);
  return {
    t,
    rssBytes: operator.procMemory().rssBytes,
    heapUsedBytes: m['nodejs_heap_size_used_bytes'],
    workqueueDepth: m['workqueue_depth'],
  };
}

async function measure(plane: ControlPlane): Promise<void> {
  const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
  const tracker = new ReadinessTracker(client, NAMESPACE);
  let operator: OperatorUnderTest | undefined;
  let keepLog = true;
  try {
    await installCrds(client, { kinds: allKinds, crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    await client.create({ group: '', version: 'v1', plural: 'namespaces', namespaced: false }, undefined, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NAMESPACE },
    });
    // The same operator on an empty namespace first: what the process costs before it caches anything.
    const empty = await OperatorUnderTest.start({
      kubeconfig: plane.kubeconfigPath,
      namespace: NAMESPACE,
      workers: settings.workers,
      nodeFlags: settings.nodeFlags,
    });
    await empty.waitReady(120_000);
    await waitIdle(empty, 60_000);
    const idle = await steadyRss(empty);
    const idleHeap = await empty.probeHeap();
    await empty.stop({ keepLog: false });
    console.log(
      `  operator with no objects: RSS ${mb(idle.rssBytes)} MB, live heap ${mb(idleHeap.heapUsedAfterBytes)} MB`,
    );
    const creating = performance.now();
    await createAll(client, NAMESPACE, initialWorkload(shape), settings.createConcurrency);
    console.log(`  created ${settings.objects} objects in ${elapsed(creating)}`);
    tracker.start();

    const starting = performance.now();
    operator = await OperatorUnderTest.start({
      kubeconfig: plane.kubeconfigPath,
      namespace: NAMESPACE,
      workers: settings.workers,
      nodeFlags: settings.nodeFlags,
    });
    const syncMs = await operator.waitReady(settings.convergeTimeoutSeconds * 1000);
    const progress = (c: Parameters<typeof describe>[0]): void =>
      console.log(`  ... ${describe(c)} after ${elapsed(starting)}`);
    await tracker.waitAllConverged(settings.objects, settings.convergeTimeoutSeconds * 1000, progress);
    const convergeMs = performance.now() - starting;
    // The operator's own CPU time: what a GC tuning costs shows here before it shows in wall time on a busy machine.
    const convergeCpuS = await cpuSeconds(operator);
    console.log(
      `  operator: caches synced after ${(syncMs / 1000).toFixed(1)} s, all ${settings.objects} Ready after ${(convergeMs / 1000).toFixed(1)} s (${convergeCpuS.toFixed(1)} s of CPU)`,
    );
    await waitIdle(operator, 120_000);
    const loaded = await steadyRss(operator);
    const exported = await operator.metrics([
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_external_memory_bytes',
    ]);
    // Read with the RSS above, before the forced GC below changes it.
    const resident = residentBreakdown(operator.pid);
    const before = await operator.probeHeap();
    console.log(
      `  of which mapped files ${mb(resident.fileBytes)} MB, malloc ${mb(resident.mallocBytes)} MB (${resident.mallocArenas} arena heaps besides brk), V8 heap, code and stacks ${mb(resident.otherAnonBytes)} MB (V8 heap committed ${mb(exported['nodejs_heap_size_total_bytes'] ?? NaN)} MB); after a full GC RSS ${mb(before.rssAfterBytes)} MB; V8's spaces, committed:`,
    );
    printHeapSpaces(before);
    console.log(
      `  RSS with ${settings.objects} objects cached: ${mb(loaded.rssBytes)} MB (peak ${mb(loaded.peakRssBytes)} MB); live heap after a full GC ${mb(before.heapUsedAfterBytes)} MB`,
    );
    if (exported['process_resident_memory_bytes'] === undefined)
      console.log('  note: /metrics exports no process_resident_memory_bytes (default metrics not registered)');
    const objectsNote = `${settings.objects} objects (${shape.endpoints} PredictionEndpoints, ${2 * shape.endpoints} DeployedModels, ${shape.services} RegistryServices, ${shape.registryEndpoints} RegistryEndpoints), all Ready, work queues empty; VmRSS of the compiled operator`;
    recordResults(
      [
        {
          id: 'B3.rss',
          name: `operator RSS with ${settings.objects} objects in its caches`,
          value: mb(loaded.rssBytes),
          unit: 'MB',
          goal: { op: '<=', value: 150 },
          baseline: { value: mb(idle.rssBytes), name: 'the same operator with no objects' },
          notes: `${objectsNote}; MB = 10^6 bytes`,
        },
        {
          id: 'B3.rss_idle',
          name: 'operator RSS with no objects (informers synced on an empty namespace)',
          value: mb(idle.rssBytes),
          unit: 'MB',
          notes: `live heap ${mb(idleHeap.heapUsedAfterBytes)} MB`,
        },
        {
          id: 'B3.heap_total',
          name: `V8 heap committed (nodejs_heap_size_total_bytes) with ${settings.objects} objects`,
          value: mb(exported['nodejs_heap_size_total_bytes'] ?? NaN),
          unit: 'MB',
          notes: `in use ${mb(exported['nodejs_heap_size_used_bytes'] ?? NaN)} MB, external ${mb(exported['nodejs_external_memory_bytes'] ?? NaN)} MB`,
        },
        {
          id: 'B3.rss_file',
          name: 'of B3.rss: pages of mapped files (the node binary, shared libraries)',
          value: mb(resident.fileBytes),
          unit: 'MB',
          notes: '/proc/<pid>/smaps, read with B3.rss (memory/resident-breakdown.ts)',
        },
        {
          id: 'B3.rss_malloc',
          name: "of B3.rss: glibc malloc's heaps (native code, Buffers, OpenSSL: off the V8 heap)",
          value: mb(resident.mallocBytes),
          unit: 'MB',
          notes: `the brk heap and ${resident.mallocArenas} per-thread arena heaps`,
        },
        {
          id: 'B3.rss_v8_and_stacks',
          name: "of B3.rss: the other anonymous pages (V8's heap and code space, thread stacks)",
          value: mb(resident.otherAnonBytes),
          unit: 'MB',
          notes: `V8 heap committed then: ${mb(exported['nodejs_heap_size_total_bytes'] ?? NaN)} MB`,
        },
        {
          id: 'B3.rss_after_gc',
          name: 'operator RSS right after a forced full GC, converged and idle',
          value: mb(before.rssAfterBytes),
          unit: 'MB',
          notes: 'the garbage left by the convergence is collected; V8 keeps pages it may reuse',
        },
        {
          id: 'B3.rss_peak',
          name: 'operator peak RSS (VmHWM) from start to convergence (initial list of everything)',
          value: mb(loaded.peakRssBytes),
          unit: 'MB',
        },
        {
          id: 'B3.heap_live_converged',
          name: 'operator live heap after a forced full GC, converged and idle',
          value: mb(before.heapUsedAfterBytes),
          unit: 'MB',
        },
        {
          id: 'B3.sync_s',
          name: `operator start to caches synced (/readyz), ${settings.objects} objects present`,
          value: Number((syncMs / 1000).toFixed(1)),
          unit: 's',
        },
        {
          id: 'B3.converge_s',
          name: `operator start to all ${settings.objects} objects Ready`,
          value: Number((convergeMs / 1000).toFixed(1)),
          unit: 's',
          notes: `--workers ${settings.workers}`,
        },
        {
          id: 'B3.converge_cpu_s',
          name: `operator CPU time (user + system) from start to all ${settings.objects} objects Ready`,
          value: Number(convergeCpuS.toFixed(2)),
          unit: 's',
          notes: 'process_cpu_seconds_total',
        },
      ],
      {
        objects: { ...shape, deployedModels: 2 * shape.endpoints, total: settings.objects },
        operatorNodeFlags: operatorNodeFlags(settings.nodeFlags),
        metricsExported: {
          process_resident_memory_bytes: exported['process_resident_memory_bytes'] !== undefined,
          nodejs_heap_size_used_bytes: exported['nodejs_heap_size_used_bytes'] !== undefined,
        },
      },
    );

    console.log(
      `  churn: ${settings.churnRate} actions/s for ${settings.churnSeconds} s; samples every ${settings.sampleSeconds} s, live-heap probes every ${settings.probeSeconds} s`,
    );
    const churn = new Churn(client, NAMESPACE, shape);
    const samples: Sample[] = [];
    const probes: Point[] = [];
    const stop = new AbortController();
    const churnStart = performance.now();
    const t = (): number => (performance.now() - churnStart) / 1000;
    const churnCpuStart = await cpuSeconds(operator);
    const running = churn.run(settings.churnRate, stop.signal);
    let nextSample = settings.sampleSeconds;
    let nextProbe = settings.probeSeconds;
    let lastReport = 0;
    while (t() < settings.churnSeconds) {
      await sleep(Math.max(0, Math.min(nextSample, nextProbe, settings.churnSeconds) - t()) * 1000);
      if (t() >= nextSample) {
        samples.push(await sample(operator, t()));
        nextSample += settings.sampleSeconds;
      }
      // Strictly inside the churn: the series compares like with like (never an idle operator with a busy one).
      if (t() >= nextProbe && t() < settings.churnSeconds) {
        const p = await operator.probeHeap();
        probes.push({ t: t(), bytes: p.heapUsedAfterBytes });
        nextProbe += settings.probeSeconds;
      }
      if (t() - lastReport >= 60) {
        lastReport = t();
        const s = samples.at(-1);
        console.log(
          `  ... ${t().toFixed(0)} s: ${churn.stats.completed} actions done (${churn.stats.failed} failed, ${churn.stats.skipped} ticks skipped), RSS ${mb(s?.rssBytes ?? NaN)} MB, heap ${mb(s?.heapUsedBytes ?? NaN)} MB, live heap ${mb(probes.at(-1)?.bytes ?? NaN)} MB, queue depth ${s?.workqueueDepth ?? '?'}`,
        );
      }
    }
    stop.abort();
    await running;
    const churnSeconds = t();
    const endOfChurn = await sample(operator, churnSeconds);
    const churnCpuS = (await cpuSeconds(operator)) - churnCpuStart;
    const { stats } = churn;
    console.log(
      `  churn done: ${stats.completed} actions in ${churnSeconds.toFixed(0)} s (${stats.failed} failed, ${stats.skipped} ticks skipped), operator CPU ${churnCpuS.toFixed(1)} s${stats.lastError ? `; last error: ${stats.lastError}` : ''}`,
    );

    const expected = churn.liveObjects() + shape.services;
    const reconverging = performance.now();
    await tracker.waitAllConverged(expected, settings.convergeTimeoutSeconds * 1000, progress);
    await waitIdle(operator, 120_000);
    const reconvergeMs = performance.now() - reconverging;
    const after = await steadyRss(operator);
    const heapAfterMetrics = await operator.metrics(['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes']);
    const heapAfter = heapAfterMetrics['nodejs_heap_size_used_bytes'];
    const residentAfter = residentBreakdown(operator.pid);
    const liveAfter = await operator.probeHeap();

    const verdict = judgeTrend(probes, churnSeconds);
    const perMinute = (slope: number): number => Number(((slope * 60) / MB).toFixed(3));
    const floorPoints = windowFloors(
      samples.flatMap((s) => (s.heapUsedBytes === undefined ? [] : [{ t: s.t, bytes: s.heapUsedBytes }])),
      Math.max(60, settings.probeSeconds),
    );
    const floorFit = floorPoints.length >= 2 ? leastSquares(floorPoints) : undefined;
    console.log(
      `  live heap during churn: ${mb(probes[0]?.bytes ?? NaN)} → ${mb(probes.at(-1)?.bytes ?? NaN)} MB over ${probes.length} probes; slope ${perMinute(verdict.fit.slope)} MB/min (residual σ ${mb(verdict.fit.residualStd)} MB); projected growth over the churn ${mb(verdict.projectedGrowthBytes)} MB, threshold ${mb(verdict.thresholdBytes)} MB: ${verdict.pass ? 'no growth trend' : 'GROWING'}`,
    );
    console.log(
      `  after the churn, converged and idle again after ${(reconvergeMs / 1000).toFixed(1)} s: RSS ${mb(after.rssBytes)} MB, heap ${mb(heapAfter ?? NaN)} MB, live heap ${mb(liveAfter.heapUsedAfterBytes)} MB (before the churn ${mb(before.heapUsedAfterBytes)} MB)`,
    );
    console.log(
      `  of which mapped files ${mb(residentAfter.fileBytes)} MB, malloc ${mb(residentAfter.mallocBytes)} MB (${residentAfter.mallocArenas} arena heaps besides brk), V8 heap, code and stacks ${mb(residentAfter.otherAnonBytes)} MB (V8 heap committed ${mb(heapAfterMetrics['nodejs_heap_size_total_bytes'] ?? NaN)} MB); after a full GC RSS ${mb(liveAfter.rssAfterBytes)} MB; V8's spaces, committed:`,
    );
    printHeapSpaces(liveAfter);
    const churnNote = `${stats.completed} churn actions in ${churnSeconds.toFixed(0)} s (${(stats.completed / churnSeconds).toFixed(1)}/s; ${stats.failed} failed)`;
    const entries: ResultEntry[] = [
      {
        id: 'B3.heap_growth',
        name: 'live heap (after forced full GC) growth over the churn projected by a least-squares line',
        value: mb(verdict.projectedGrowthBytes),
        unit: 'MB',
        goal: { op: '<=', value: mb(verdict.thresholdBytes) },
        pass: verdict.pass,
        notes: `${probes.length} probes every ${settings.probeSeconds} s during ${churnNote}; threshold max(2 MB, 2 % of the first probe); residual σ ${mb(verdict.fit.residualStd)} MB`,
      },
      {
        id: 'B3.heap_slope',
        name: 'live heap slope during the churn',
        value: perMinute(verdict.fit.slope),
        unit: 'MB/min',
      },
      {
        id: 'B3.heap_live_first',
        name: 'live heap at the first probe of the churn',
        value: mb(probes[0]?.bytes ?? NaN),
        unit: 'MB',
      },
      {
        id: 'B3.heap_live_last',
        name: 'live heap at the last probe of the churn',
        value: mb(probes.at(-1)?.bytes ?? NaN),
        unit: 'MB',
      },
      {
        id: 'B3.heap_used_end',
        name: 'heap in use at the end of the churn (nodejs_heap_size_used_bytes, no forced GC)',
        value: mb(endOfChurn.heapUsedBytes ?? NaN),
        unit: 'MB',
      },
      {
        id: 'B3.heap_floor_slope',
        name: 'slope of the per-window floor of nodejs_heap_size_used_bytes (no forced GC; cross-check)',
        value: floorFit ? perMinute(floorFit.slope) : NaN,
        unit: 'MB/min',
        notes: `windows of ${Math.max(60, settings.probeSeconds)} s; first floor ${mb(floorPoints[0]?.bytes ?? NaN)} MB, last ${mb(floorPoints.at(-1)?.bytes ?? NaN)} MB`,
      },
      {
        id: 'B3.heap_live_idle_delta',
        name: 'live heap, converged and idle: after the churn minus before',
        value: mb(liveAfter.heapUsedAfterBytes - before.heapUsedAfterBytes),
        unit: 'MB',
        notes: `same object count; the objects now carry the churn's labels and annotations (managedFields are not cached)`,
      },
      {
        id: 'B3.rss_end',
        name: `operator RSS after the churn, ${expected} objects cached, converged and idle`,
        value: mb(after.rssBytes),
        unit: 'MB',
        goal: { op: '<=', value: 150 },
        notes: `${churnNote}; of which mapped files ${mb(residentAfter.fileBytes)} MB, malloc ${mb(residentAfter.mallocBytes)} MB (${residentAfter.mallocArenas} arena heaps besides brk), V8 heap, code and stacks ${mb(residentAfter.otherAnonBytes)} MB (V8 heap committed ${mb(heapAfterMetrics['nodejs_heap_size_total_bytes'] ?? NaN)} MB)`,
      },
      {
        id: 'B3.rss_end_after_gc',
        name: 'operator RSS right after a forced full GC, after the churn, converged and idle',
        value: mb(liveAfter.rssAfterBytes),
        unit: 'MB',
        notes:
          "what of B3.rss_end was garbage not yet collected; V8's spaces before and after that GC are in the details",
      },
      {
        id: 'B3.churn_rate',
        name: 'churn actions completed per second',
        value: Number((stats.completed / churnSeconds).toFixed(2)),
        unit: '/s',
        baseline: { value: settings.churnRate, name: 'target rate' },
      },
      {
        id: 'B3.reconverge_s',
        name: 'end of the churn to everything Ready and queues empty',
        value: Number((reconvergeMs / 1000).toFixed(1)),
        unit: 's',
      },
      {
        id: 'B3.churn_cpu_ms_per_action',
        name: 'operator CPU time per churn action (includes the forced-GC probes)',
        value: Number(((churnCpuS * 1000) / Math.max(1, stats.completed)).toFixed(2)),
        unit: 'ms',
        notes: `${churnCpuS.toFixed(1)} s of CPU over ${churnSeconds.toFixed(0)} s`,
      },
    ];
    recordResults(entries, {
      churn: stats,
      liveHeapProbes: probes.map((p) => ({ t: Number(p.t.toFixed(1)), liveMB: mb(p.bytes) })),
      samples: samples.map((s) => ({
        t: Number(s.t.toFixed(1)),
        rssMB: mb(s.rssBytes),
        heapUsedMB: s.heapUsedBytes === undefined ? null : mb(s.heapUsedBytes),
        workqueueDepth: s.workqueueDepth ?? null,
      })),
      readinessRelists: tracker.relists,
      heapSpacesBeforeChurn: describeHeapSpaces(before),
      heapSpacesAfterChurn: describeHeapSpaces(liveAfter),
    });
    if (stats.failed > 0) throw new Error(`${stats.failed} churn actions failed; last: ${stats.lastError ?? '?'}`);
    keepLog = false;
  } finally {
    if (keepLog && operator) console.error(`  operator log kept: ${operator.logFile}\n${await operator.logTail(20)}`);
    await operator?.stop({ keepLog });
    await tracker.stop();
    client.close();
  }
}

async function main(): Promise<number> {
  const budget = memoryBudgetSeconds(settings);
  console.log(
    `memory benchmark: ${settings.objects} objects, churn ${settings.churnSeconds} s at ${settings.churnRate}/s (bounded by ${budget} s); operator node flags ${operatorNodeFlags(settings.nodeFlags).join(' ') || 'none'}`,
  );
  const stale = staleBuildFiles();
  if (stale.length > 0)
    console.log(
      `  WARNING: dist/ is older than ${stale.length} source files (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}); \`npm run bench\` builds first`,
    );
  let plane: ControlPlane | undefined;
  let ending = false;
  const end = (why: string, code: number): void => {
    if (ending) return;
    ending = true;
    console.error(why);
    // The watchdogs end the operator and the control plane once this process is gone, should stop() hang.
    void (plane?.stop() ?? Promise.resolve()).finally(() => process.exit(code));
  };
  const timer = setTimeout(() => end(`memory benchmark exceeded ${budget} s; stopping`, 2), budget * 1000);
  process.once('SIGTERM', () => end('SIGTERM: stopping', 143));
  process.once('SIGINT', () => end('SIGINT: stopping', 130));
  try {
    plane = await startControlPlane({ watchCache: true, log: (l) => console.error(`[control plane] ${l}`) });
    await measure(plane);
    return 0;
  } finally {
    clearTimeout(timer);
    await plane?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
