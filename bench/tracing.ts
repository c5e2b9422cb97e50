/**
 * B6 with tracing: what OpenTelemetry costs the gateway. Five `endpoint-operator gateway` processes
 * (the compiled binary) serve the same endpoint of a real kube-apiserver (started here) in front of
 * the same model server: two with tracing off (no OTEL_* set), two exporting OTLP/HTTP to a loopback
 * receiver with the sampler at 0.01, one with the sampler at 1.0. They are called open-loop at a
 * fixed offered rate in alternating blocks, so all of them see the same machine load. Reported per
 * gateway: CPU per call, by thread, and p50/p99 latency; what the traced arms add to the untraced
 * one; and the tracing code path alone in-process. Bounded in count and time.
 *
 * Why this method. The goals (0.01 adds <= 5 µs of CPU per call, 1.0 <= 40) are differences of a few
 * per cent between separate processes, on a machine other work shares:
 * - CPU is read per thread in ns from /proc/<pid>/task/<tid>/schedstat (bench/process-cpu.ts), not
 *   in /proc/<pid>/stat's 10 ms ticks (±10 µs per call over 1,000 calls), and split into the event
 *   loop's thread, V8's threads (GC helpers, compilers) and threads started later (libuv's pool), so
 *   a cost outside the span code (more GC, an exporter thread) shows where it lands.
 * - Two gateways with the same settings (off and off-b, 0.01 and 0.01-b) give the noise floor: what
 *   two processes of one build differ by in the same run. A difference between arms within it is
 *   not a measured cost.
 * - Many short blocks (20 per gateway by default), the order rotating, so a change in the machine's
 *   load during the run is shared by every arm instead of falling on one; ns readings make short
 *   blocks exact, where ticks needed long ones.
 * - Each block is charged its calls and a settle time after them (past OTEL_BSP_SCHEDULE_DELAY=200
 *   ms), so the exports of its spans are charged to it; every arm, traced or not, waits the same.
 *   The 200 ms delay (the SDK's default is 5 s) makes the 0.01 arm export about 5 small batches a
 *   second instead of one every 5 s: its export cost is overstated, not hidden.
 * - A long warm-up (20,000 calls per gateway, closed loop) before any block: V8 optimises a function
 *   only after enough calls, on its own threads, and until it has, the function runs in the
 *   interpreter at many times the cost. After 1,000 calls (the old warm-up) V8's compiler threads
 *   were still busy through the measured blocks (TurboFan compilations until the end of the run,
 *   a quarter of the gateways' CPU), more so in the traced gateways, which have more code to tier
 *   up: a one-time start-up cost measured as if it were paid on every call. A gateway in service
 *   serves its millionth call, not its thousandth; the figures are for that one.
 *
 *   npx tsx bench/tracing.ts [--rate 1000] [--requests 5000] [--blocks 20] [--warmup 20000] [--max-seconds 150]
 *
 * Needs dist/ (`npm run build`; `npm run bench` builds). EO_BENCH_CPU_PROF=1 writes a V8 CPU profile of
 * each gateway to /tmp/eo-tracing-prof/{off,0.01,1.0}/ (start-up and warm-up included);
 * EO_BENCH_PERF_DIR=<dir> records `perf record` of each gateway over the measured blocks only (see startPerf).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startDemoModelServer } from '../src/demo-models/index.js';
import { startControlPlane, type ControlPlane } from '../src/devcluster/index.js';
import { installCrds } from '../src/operator/crds.js';
import { KubeClient } from '../src/runtime/kube-client.js';
import { GatewayTracing } from '../src/gateway/tracing.js';
import { startTelemetry } from '../src/runtime/telemetry.js';
import { nodeThreadsCpu, nodeThreadsCpuDelta, threadCpuOf, type NodeThreadsCpu } from './process-cpu.js';
import { recordResults } from './results.js';
import { openLoop, pctOf as pct, RESOURCE_NAME, startGatewayBinary, stopChildren, writeObjects } from './gateway-fixture.js';

const { values } = parseArgs({
  options: { rate: { type: 'string', default: '1000' }, requests: { type: 'string', default: '5000' }, blocks: { type: 'string', default: '20' }, warmup: { type: 'string', default: '20000' }, 'max-seconds': { type: 'string', default: '150' } },
});
const NS = 'bench-tracing';
const MODEL = 'fraud';
const EXPORT_DELAY_MS = 200;
/** After a block's last answer: past the export delay, time for the export itself on loopback. */
const SETTLE_MS = 300;
/** The window in which every gateway's CPU with no calls is measured. */
const IDLE_MS = 2000;
const BODY = JSON.stringify({ instances: [{ amount: 240, hourOfDay: 23, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 5 }] });

interface Arm {
  readonly name: 'off' | 'off-b' | 'sampled-0.01' | 'sampled-0.01-b' | 'sampled-1.0';
  readonly env: Record<string, string>;
}

const NO_CPU: NodeThreadsCpu = { main: 0, v8: 0, later: 0, total: 0 };
const sumCpu = (a: NodeThreadsCpu, b: NodeThreadsCpu): NodeThreadsCpu => ({ main: a.main + b.main, v8: a.v8 + b.v8, later: a.later + b.later, total: a.total + b.total });
interface Gateway {
  readonly arm: Arm;
  readonly port: number;
  readonly pid: number;
  readonly latencies: number[];
  /** ns on CPU over the measured blocks, by kind of thread. */
  cpu: NodeThreadsCpu;
}

interface Figures {
  readonly arm: string;
  readonly calls: number;
  readonly p50: number;
  readonly p99: number;
  /** µs per call, by kind of thread. */
  readonly cpuUs: NodeThreadsCpu;
}
const cpuOf = (pid: number): NodeThreadsCpu => nodeThreadsCpu(pid, threadCpuOf(pid));

/** A gateway binary with `env` added (and any inherited OTEL_* removed); its port from its "gateway serving" line. */
function startGateway(kubeconfig: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  // --auth=none: the calls here carry no token; what is measured is tracing.
  return startGatewayBinary(kubeconfig, NS, ['--health-port=-1', '--auth=none'], { env: { ...base, ...env }, profileDir: `/tmp/eo-tracing-prof/${env['OTEL_TRACES_SAMPLER_ARG'] ?? 'off'}` });
}

/** An OTLP/HTTP receiver that accepts every export and counts the bytes. */
async function startReceiver(): Promise<{ url: string; bytes: () => number; close: () => void }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes, close: () => server.close() };
}

/**
 * The tracing code path alone, in this process, with the real SDK exporting to the loopback receiver:
 * what one gateway call runs of it (server span continued from a traceparent-less call, one client
 * span, injection, ends), CPU per call including the export of every sampled span (a queue large
 * enough to drop none, in batches of 20,000 so that the exporter's concurrency limit is never hit, flushed
 * inside the measurement). Independent of the other processes' load,
 * unlike the per-process figures.
 */
async function pathCpuPerCall(receiverUrl: string, ratio: string | undefined): Promise<number> {
  const env: Record<string, string> = ratio === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio, OTEL_BSP_MAX_QUEUE_SIZE: '200000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20000' };
  Object.assign(process.env, env);
  const telemetry = startTelemetry('bench-path', env);
  const tracing = new GatewayTracing();
  const incoming = { 'content-type': 'application/json', host: 'gateway', 'content-length': '120' };
  const target = { origin: 'http://127.0.0.1:9000', basePath: '' };
  const once = (): void => {
    const call = tracing.startCall(incoming);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (call === undefined) return GatewayTracing.forward(incoming, headers);
    call.describe('predict', NS, 'fraud', RESOURCE_NAME);
    call.attempt(target, headers, false).end(200);
    call.end(200, '1');
  };
  for (let i = 0; i < 20_000; i++) once();
  const calls = 100_000;
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    once();
    if (i % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await telemetry?.shutdown(); // flushes every span still queued
  const used = process.cpuUsage(before);
  for (const key of Object.keys(env)) delete process.env[key];
  return (used.user + used.system) / calls;
}

/**
 * EO_BENCH_PERF_DIR=<dir>: `perf record` of each gateway over the measured blocks only (not its start-up
 * or warm-up), to <dir>/<arm>.data. With EO_BENCH_GATEWAY_NODE_FLAGS=--perf-basic-prof, JIT frames carry
 * V8's tier mark (`*` optimised, `^` baseline, `~` interpreted), so a function that runs less optimised
 * in one arm than in another shows by name.
 */
function startPerf(gateways: readonly { arm: Arm; pid: number }[]): ChildProcess[] {
  const dir = process.env['EO_BENCH_PERF_DIR'];
  if (dir === undefined || dir === '') return [];
  mkdirSync(dir, { recursive: true });
  return gateways.map((g) => spawn('perf', ['record', '-q', '-F', '999', '-g', '-e', 'cpu-clock', '-p', String(g.pid), '-o', `${dir}/${g.arm.name}.data`], { stdio: 'ignore' }));
}

async function stopPerf(perfs: readonly ChildProcess[]): Promise<void> {
  await Promise.all(perfs.map((p) => new Promise<void>((resolve) => {
    if (p.exitCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGINT'); // perf writes its file on SIGINT
  })));
}

async function driver(): Promise<void> {
  const rate = Number(values.rate);
  const blocks = Number(values.blocks);
  const perBlock = Math.ceil(Number(values.requests) / blocks);
  const maxMs = Number(values['max-seconds']) * 1000;
  let plane: ControlPlane | undefined;
  const children: ChildProcess[] = [];
  const deadline = setTimeout(() => {
    console.error(`B6 tracing exceeded ${maxMs / 1000} s; stopping`);
    for (const c of children) c.kill('SIGKILL');
    void (plane?.stop() ?? Promise.resolve()).finally(() => process.exit(2));
  }, maxMs + 120_000);
  const receiver = await startReceiver();
  const model = await startDemoModelServer({ protocol: 'KServeV1', modelName: MODEL, version: 'v1' });
  try {
    plane = await startControlPlane({ log: (l) => console.error(`[control plane] ${l}`) });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    await installCrds(client, { crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    await writeObjects(client, { namespace: NS, model: MODEL, resourceName: RESOURCE_NAME, modelPort: model.port });
    client.close();
    const traced = (ratio: string): Record<string, string> => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio, OTEL_SERVICE_NAME: 'bench-gateway',
      // Exports every 200 ms instead of 5 s, so a block can wait for its spans' export without long idle windows.
      OTEL_BSP_SCHEDULE_DELAY: String(EXPORT_DELAY_MS),
    });
    // Two gateways each for off and 0.01 (A/A): what two processes of the same build and settings differ by is the noise floor
    // of a difference between arms, and the 0.01 goal (5 µs) is smaller than what separate processes were seen to differ by.
    const arms: Arm[] = [
      { name: 'off', env: {} }, { name: 'off-b', env: {} },
      { name: 'sampled-0.01', env: traced('0.01') }, { name: 'sampled-0.01-b', env: traced('0.01') },
      { name: 'sampled-1.0', env: traced('1.0') },
    ];
    const gateways: Gateway[] = [];
    for (const arm of arms) {
      const g = await startGateway(plane.kubeconfigPath, arm.env);
      children.push(g.child);
      gateways.push({ arm, ...g, pid: g.child.pid ?? 0, latencies: [] as number[], cpu: NO_CPU });
    }

    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const send = (port: number): Promise<number> => new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/v1/${RESOURCE_NAME}:predict`, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`HTTP ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(BODY);
    });
    const run = (port: number, count: number): Promise<number[]> => openLoop(() => send(port), count, rate);
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

    /** Closed loop, `concurrency` calls in flight: the warm-up's only job is to run the code often, fast. */
    const flood = async (port: number, count: number, concurrency: number): Promise<void> => {
      let sent = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (sent++ < count) await send(port);
      }));
    };
    const warmup = Number(values.warmup);
    for (const g of gateways) {
      const before = cpuOf(g.pid);
      await flood(g.port, warmup, 16);
      const used = nodeThreadsCpuDelta(before, cpuOf(g.pid));
      console.error(`warm-up of ${g.arm.name} (pid ${g.pid}): ${warmup} calls, V8 threads ${(used.v8 / 1e3 / warmup).toFixed(1)} µs/call, main ${(used.main / 1e3 / warmup).toFixed(1)} µs/call`);
    }
    await sleep(EXPORT_DELAY_MS + SETTLE_MS);
    const perf = startPerf(gateways);
    const t0 = performance.now();
    for (let b = 0; b < blocks && performance.now() - t0 < maxMs; b++) {
      // The arms take turns going first: whatever the machine does after one arm's block is not always charged to the same next arm.
      for (const g of [...gateways.slice(b % gateways.length), ...gateways.slice(0, b % gateways.length)]) {
        const before = cpuOf(g.pid);
        g.latencies.push(...(await run(g.port, perBlock)));
        // Every arm waits past the export delay inside its block, so the traced arms' exports of the block's spans are charged to it.
        await sleep(EXPORT_DELAY_MS + SETTLE_MS);
        g.cpu = sumCpu(g.cpu, nodeThreadsCpuDelta(before, cpuOf(g.pid)));
      }
    }
    await stopPerf(perf);
    agent.destroy();
    // What each gateway spends with no calls at all (informer watches, timers, the batch processor's): charged to the blocks' waits alike.
    const idleBefore = gateways.map((g) => cpuOf(g.pid));
    await sleep(IDLE_MS);
    const idleUsPerS = gateways.map((g, i) => nodeThreadsCpuDelta(idleBefore[i] ?? NO_CPU, cpuOf(g.pid)).total / 1e3 / (IDLE_MS / 1000));

    const path = { off: await pathCpuPerCall(receiver.url, undefined), low: await pathCpuPerCall(receiver.url, '0.01'), full: await pathCpuPerCall(receiver.url, '1.0') };
    const r1 = (x: number): number => Number(x.toFixed(1));
    const r3 = (x: number): number => Number(x.toFixed(3));
    const perCall = (cpu: NodeThreadsCpu, calls: number): NodeThreadsCpu => ({ main: cpu.main / 1e3 / calls, v8: cpu.v8 / 1e3 / calls, later: cpu.later / 1e3 / calls, total: cpu.total / 1e3 / calls });
    const figuresOf = (name: string, of: typeof gateways): Figures => {
      const latencies = of.flatMap((g) => g.latencies);
      return { arm: name, calls: latencies.length, p50: pct(latencies, 50), p99: pct(latencies, 99), cpuUs: perCall(of.reduce((c, g) => sumCpu(c, g.cpu), NO_CPU), latencies.length) };
    };
    const each = gateways.map((g) => figuresOf(g.arm.name, [g]));
    const byArm = (...names: Arm['name'][]): typeof gateways => gateways.filter((g) => names.includes(g.arm.name));
    const off = figuresOf('off (both)', byArm('off', 'off-b'));
    const low = figuresOf('0.01 (both)', byArm('sampled-0.01', 'sampled-0.01-b'));
    const full = figuresOf('1.0', byArm('sampled-1.0'));
    const [offA, offB, lowA, lowB] = each as [Figures, Figures, Figures, Figures, Figures];
    const aaOff = offB.cpuUs.total - offA.cpuUs.total;
    const aaLow = lowB.cpuUs.total - lowA.cpuUs.total;
    const added = (f: Figures): string => `CPU ${(f.cpuUs.total - off.cpuUs.total).toFixed(1)} µs/call (main thread ${(f.cpuUs.main - off.cpuUs.main).toFixed(1)}, V8 threads ${(f.cpuUs.v8 - off.cpuUs.v8).toFixed(1)}, later threads ${(f.cpuUs.later - off.cpuUs.later).toFixed(1)})`;
    const conditions = `${offA.calls} calls per gateway at ${rate}/s offered open-loop, ${blocks} alternating blocks, loopback; per-thread CPU from /proc schedstat (ns); OTLP/HTTP JSON to a loopback receiver (${receiver.bytes()} bytes received); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`;
    console.log(`B6 tracing: ${conditions}`);
    for (const [i, f] of each.entries()) {
      console.log(`  ${f.arm.padEnd(15)} p50 ${f.p50.toFixed(3)} ms  p99 ${f.p99.toFixed(3)} ms  gateway CPU ${f.cpuUs.total.toFixed(1)} µs/call (main ${f.cpuUs.main.toFixed(1)}, V8 ${f.cpuUs.v8.toFixed(1)}, later ${f.cpuUs.later.toFixed(1)}); idle ${(idleUsPerS[i] ?? NaN).toFixed(0)} µs/s`);
    }
    console.log(`  A/A noise floor (same settings, another process): off ${aaOff.toFixed(1)} µs/call, 0.01 ${aaLow.toFixed(1)} µs/call`);
    console.log(`  added by sampling 0.01 (both gateways against both off): ${added(low)} (goal <= 5), p50 ${(low.p50 - off.p50).toFixed(3)} ms, p99 ${(low.p99 - off.p99).toFixed(3)} ms`);
    console.log(`  added by sampling 1.0:  ${added(full)} (goal <= 40), p50 ${(full.p50 - off.p50).toFixed(3)} ms, p99 ${(full.p99 - off.p99).toFixed(3)} ms`);
    console.log(`  the tracing path alone, in-process (100,000 calls, exports flushed): off ${path.off.toFixed(2)} µs/call, 0.01 ${path.low.toFixed(2)} µs/call, 1.0 ${path.full.toFixed(2)} µs/call`);
    const baseline = { value: r1(off.cpuUs.total), name: 'gateway CPU per call with tracing off (two gateways), µs' };
    recordResults([
      { id: 'B6.tracing.off.cpu_per_request', name: 'gateway CPU per predict call, tracing off (no OTEL_* set; two gateways)', value: r1(off.cpuUs.total), unit: 'µs', notes: conditions },
      { id: 'B6.tracing.aa.off_cpu_difference', name: 'A/A: CPU per call of one untraced gateway minus the other (noise floor)', value: r1(aaOff), unit: 'µs' },
      { id: 'B6.tracing.aa.sampled_0_01_cpu_difference', name: 'A/A: CPU per call of one gateway at 0.01 minus the other (noise floor)', value: r1(aaLow), unit: 'µs' },
      { id: 'B6.tracing.sampled_0_01.added_cpu', name: 'gateway CPU per call added by tracing with the sampler at 0.01 (two gateways against two untraced)', value: r1(low.cpuUs.total - off.cpuUs.total), unit: 'µs', goal: { op: '<=', value: 5 }, baseline },
      { id: 'B6.tracing.sampled_1_0.added_cpu', name: 'gateway CPU per call added by tracing every call (sampler 1.0)', value: r1(full.cpuUs.total - off.cpuUs.total), unit: 'µs', goal: { op: '<=', value: 40 }, baseline },
      { id: 'B6.tracing.path.off', name: 'CPU of the tracing code path per call, in-process, tracing off', value: Number(path.off.toFixed(2)), unit: 'µs', goal: { op: '<=', value: 0.5 } },
      { id: 'B6.tracing.path.sampled_0_01', name: 'CPU of the tracing code path per call, in-process, sampler 0.01, exports included', value: Number(path.low.toFixed(2)), unit: 'µs', goal: { op: '<=', value: 5 } },
      { id: 'B6.tracing.path.sampled_1_0', name: 'CPU of the tracing code path per call, in-process, every call traced, exports included', value: Number(path.full.toFixed(2)), unit: 'µs', goal: { op: '<=', value: 40 } },
      { id: 'B6.tracing.sampled_0_01.added_p50', name: 'median latency added by tracing at 0.01', value: r3(low.p50 - off.p50), unit: 'ms', baseline: { value: r3(off.p50), name: 'p50 with tracing off, ms' } },
      { id: 'B6.tracing.sampled_0_01.added_p99', name: 'p99 latency added by tracing at 0.01', value: r3(low.p99 - off.p99), unit: 'ms', baseline: { value: r3(off.p99), name: 'p99 with tracing off, ms' } },
      { id: 'B6.tracing.sampled_1_0.added_p50', name: 'median latency added by tracing every call', value: r3(full.p50 - off.p50), unit: 'ms', baseline: { value: r3(off.p50), name: 'p50 with tracing off, ms' } },
      { id: 'B6.tracing.sampled_1_0.added_p99', name: 'p99 latency added by tracing every call', value: r3(full.p99 - off.p99), unit: 'ms', baseline: { value: r3(off.p99), name: 'p99 with tracing off, ms' } },
    ], {
      tracing: Object.fromEntries(each.map((f, i) => [f.arm, {
        p50: r3(f.p50), p99: r3(f.p99), cpuPerCallUs: r1(f.cpuUs.total),
        cpuPerCallUsByThread: { main: r1(f.cpuUs.main), v8: r1(f.cpuUs.v8), later: r1(f.cpuUs.later) }, idleCpuUsPerSecond: Math.round(idleUsPerS[i] ?? NaN),
      }])),
    });
  } finally {
    clearTimeout(deadline);
    await stopChildren(children);
    await model.close();
    receiver.close();
    await plane?.stop();
  }
}

await driver();
