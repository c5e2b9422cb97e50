/**
 * Issue 49, a load test as users run one: the chart installed by Helm with its gateway on the real node
 * (test/integration/deploy/chart-on-real-node-install.ts), the `iris` endpoint splitting its calls between two
 * Vertex model servers there, and three arms through the gateway's Service over TLS with a ServiceAccount token:
 * gRPC `Predict` under ghz, REST `:predict` under h2load over HTTP/2 and over HTTP/1.1 (test/integration/deploy/gateway-load.ts).
 *
 * Each arm sends BENCH_GATEWAY_LOAD_CALLS calls (default 2,000) with 16 in flight, in BENCH_GATEWAY_LOAD_ROUNDS
 * interleaved rounds (default 3, the arms' order rotated each round) after a warm-up round of the same calls; medians
 * are recorded.
 * The gateway's CPU per call is its pods' cgroup CPU over the arm, less their idle rate (measured for 10 s before and
 * after the rounds) over the arm's time, divided by the calls; the figure with the idle work is recorded beside it. Istio's published sidecar cost is the figure it is set
 * against (docs/benchmarks.md says what that comparison means). The load tool's own CPU per call is recorded too
 * (test/support/load-tool.ts): it runs on the same cores, and the gateway's figure moves with how busy they are.
 */
import { cpus, loadavg } from 'node:os';
import { IRIS_INSTANCES } from '../dev/models/iris-model.js';
import { installChartOnRealNode, GATEWAY_AUDIENCE } from '../test/integration/deploy/chart-on-real-node-install.js';
import { CALLER_RBAC, irisModels } from '../test/integration/deploy/chart-on-real-node-objects.js';
import {
  ARM_NAMES,
  ARMS,
  chartGatewayTarget,
  runArm,
  type Arm,
  type ArmFigures,
} from '../test/integration/deploy/gateway-load.js';
import { podsCpuSeconds } from '../test/support/pod-cgroup-cpu.js';
import { median } from './paired-arms.js';
import { recordResults, type ResultEntry } from './results.js';

const CALLS = Number(process.env['BENCH_GATEWAY_LOAD_CALLS'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_GATEWAY_LOAD_ROUNDS'] ?? 3);
const LOAD = { calls: CALLS, concurrency: 16, connections: 4 };
const NAMESPACE = 'endpoint-demo';
/** istio.io, "Performance and Scalability": the Envoy sidecar uses 0.35 vCPU per 1,000 requests/s. */
const ISTIO_SIDECAR_US_PER_CALL = 350;
const IDLE_SECONDS = 10;

const chart = await installChartOnRealNode({ name: 'gateway-load', namespaces: [NAMESPACE], values: {} });
try {
  const { k } = chart;
  const objects = irisModels(chart.modelImage.ref, NAMESPACE).map((o) => JSON.stringify(o));
  await k(['apply', '-f', '-'], `{"apiVersion": "v1", "kind": "List", "items": [${objects.join(',')}]}`);
  await k(['apply', '-f', '-'], CALLER_RBAC(NAMESPACE));
  await k(['wait', '--for=condition=Ready', '--timeout=600s', '-n', NAMESPACE, 'deployedmodels', '--all']);
  await k(['wait', '--for=condition=Ready', '--timeout=120s', '-n', NAMESPACE, 'predictionendpoint/iris']);
  const token = (
    await k([
      'create',
      'token',
      'chart-test-caller',
      '-n',
      NAMESPACE,
      '--duration=3600s',
      `--audience=${GATEWAY_AUDIENCE}`,
    ])
  ).trim();
  const target = await chartGatewayTarget(k, { caPem: await chart.gatewayCa(), token, namespace: NAMESPACE });
  console.log(
    `gateway pods ${target.podUids.length}, ${target.endpoint}, ${IRIS_INSTANCES.length} instances a call, ${cpus().length} cores`,
  );

  const idle = async (): Promise<number> => {
    const before = await podsCpuSeconds(target.podUids);
    const started = performance.now();
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const used = (await podsCpuSeconds(target.podUids)) - before;
    return used / ((performance.now() - started) / 1000);
  };
  const idleBefore = await idle();
  console.log(`gateway pods idle: ${(idleBefore * 1e6).toFixed(0)} µs of CPU a second`);
  // A round's worth of each arm, straight before the rounds: the first arm after a pause (the idle reading, or a
  // shorter warm-up) read up to twice the CPU per call of the same arm later in the run, and that arm was gRPC.
  for (const arm of ARMS) {
    const w = await runArm(arm, target, LOAD);
    console.log(
      `warm-up ${ARM_NAMES[arm]}: ${w.ok}/${w.calls} ok, gateway CPU ${w.gatewayCpuPerCallUs.toFixed(0)} µs a call`,
    );
  }

  const runs: ArmFigures[] = [];
  const loads: number[] = [];
  const toolUs = (r: ArmFigures): number => (r.toolCpuSeconds / r.calls) * 1e6;
  for (let round = 0; round < ROUNDS; round++) {
    const order = ARMS.map((_, i) => ARMS[(i + round) % ARMS.length] as Arm);
    for (const arm of order) {
      const f = await runArm(arm, target, LOAD);
      runs.push(f);
      loads.push(loadavg()[0] ?? NaN);
      console.log(
        `round ${round + 1} ${ARM_NAMES[arm]}: ${f.ok}/${f.calls} ok, ${f.perSecond.toFixed(0)}/s, p50 ${f.p50Ms.toFixed(1)} ms, p99 ${f.p99Ms.toFixed(1)} ms, gateway CPU ${f.gatewayCpuPerCallUs.toFixed(0)} µs a call, the tool's ${toolUs(f).toFixed(0)}${f.failures === '' ? '' : `; ${f.failures}`}`,
      );
    }
  }

  const idleAfter = await idle();
  // The pods' own work between calls (probes, informers, metrics), as CPU seconds a second: taken out of each arm's
  // window, so the figure is what the calls cost. Before and after the rounds, averaged.
  const idleRate = (idleBefore + idleAfter) / 2;
  const idleUsPerSecond = idleRate * 1e6;
  console.log(`gateway pods idle: ${(idleAfter * 1e6).toFixed(0)} µs of CPU a second after the rounds`);
  const netUs = (r: ArmFigures): number => ((r.gatewayCpuSeconds - idleRate * r.windowSeconds) / r.calls) * 1e6;
  const entries: ResultEntry[] = [];
  const perArm = (arm: Arm) => {
    const mine = runs.filter((r) => r.arm === arm);
    return {
      perSecond: median(mine.map((r) => r.perSecond)),
      p50: median(mine.map((r) => r.p50Ms)),
      p99: median(mine.map((r) => r.p99Ms)),
      cpu: median(mine.map(netUs)),
      grossCpu: median(mine.map((r) => r.gatewayCpuPerCallUs)),
      toolCpu: median(mine.map(toolUs)),
      failed: mine.reduce((a, r) => a + r.failed, 0),
      calls: mine.reduce((a, r) => a + r.calls, 0),
    };
  };
  const notes = `${ROUNDS} rounds of ${CALLS} calls, 16 in flight; load average ${median(loads).toFixed(1)} (median over the arms); the gateway pods' idle ${idleUsPerSecond.toFixed(0)} µs/s taken out`;
  const summary: Record<string, ReturnType<typeof perArm>> = {};
  for (const arm of ARMS) {
    const a = perArm(arm);
    summary[arm] = a;
    const id = `I49.gateway-load.${arm}`;
    entries.push(
      {
        id: `${id}.cpu_per_call`,
        name: `${ARM_NAMES[arm]}: the gateway pods' cgroup CPU per call, their idle work taken out (median), against Istio's published sidecar cost`,
        value: a.cpu,
        unit: 'µs',
        baseline: {
          value: ISTIO_SIDECAR_US_PER_CALL,
          name: "Istio's Envoy sidecar, 0.35 vCPU per 1,000 requests/s (istio.io, published)",
        },
        ratio: a.cpu / ISTIO_SIDECAR_US_PER_CALL,
        notes: `${notes}; ${a.grossCpu.toFixed(0)} µs with it`,
      },
      {
        id: `${id}.tool_cpu_per_call`,
        name: `${ARM_NAMES[arm]}: the load tool's own CPU per call (median), on the cores the gateway shares`,
        value: a.toolCpu,
        unit: 'µs',
      },
      { id: `${id}.per_second`, name: `${ARM_NAMES[arm]}: calls a second (median)`, value: a.perSecond, unit: '/s' },
      { id: `${id}.p50`, name: `${ARM_NAMES[arm]}: p50 latency (median)`, value: a.p50, unit: 'ms' },
      { id: `${id}.p99`, name: `${ARM_NAMES[arm]}: p99 latency (median)`, value: a.p99, unit: 'ms' },
      {
        id: `${id}.failed`,
        name: `${ARM_NAMES[arm]}: calls not answered OK, of ${a.calls}`,
        value: a.failed,
        unit: 'calls',
        goal: { op: '==', value: 0 },
      },
    );
  }
  const grpc = summary['grpc'];
  const h2 = summary['rest-h2'];
  const h1 = summary['rest-h1'];
  if (grpc !== undefined && h2 !== undefined && h1 !== undefined) {
    entries.push(
      {
        id: 'I49.gateway-load.grpc_over_rest_h2.cpu_per_call',
        name: "gRPC ÷ REST over HTTP/2, gateway CPU per call, through the chart on the real node (context: the goal is bench/grpc.ts's)",
        value: grpc.cpu / h2.cpu,
        unit: 'ratio',
      },
      {
        id: 'I49.gateway-load.grpc_over_rest_h1.cpu_per_call',
        name: 'gRPC ÷ REST over HTTP/1.1, gateway CPU per call, through the chart on the real node (context)',
        value: grpc.cpu / h1.cpu,
        unit: 'ratio',
      },
    );
  }
  recordResults(entries, {
    gatewayLoad: { load: LOAD, rounds: ROUNDS, idleUsPerSecond: [idleBefore * 1e6, idleAfter * 1e6], loads, runs },
  });
  for (const arm of ARMS) {
    const a = summary[arm];
    if (a !== undefined)
      console.log(
        `${ARM_NAMES[arm]}: ${a.perSecond.toFixed(0)}/s, p50 ${a.p50.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms, ${a.failed} failed of ${a.calls}, gateway CPU ${a.cpu.toFixed(0)} µs a call, ${a.grossCpu.toFixed(0)} with its idle work (Istio's sidecar: ${ISTIO_SIDECAR_US_PER_CALL}); the tool's own ${a.toolCpu.toFixed(0)} µs a call`,
      );
  }
} finally {
  await chart.plane.stop();
}
