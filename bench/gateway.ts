/**
 * B6: what the gateway adds to a prediction call. The same demo model server (KServe V1 fraud scorer)
 * is called directly and through the gateway, in one run, open-loop at a fixed offered rate over
 * keep-alive connections, in alternating blocks so both arms see the same machine load. The model server
 * runs in the control plane's model host (a network namespace behind a veth pair: the apiserver refuses
 * loopback addresses in EndpointSlices), so both arms reach it over that veth pair, the gateway arm after
 * a loopback hop to the gateway.
 * Reported: added p50 and p99 latency (gateway arm − direct arm), and the gateway process's CPU
 * (user + system, from /proc) per request. The model server and the gateway each run in their own
 * process; the gateway is the compiled `endpoint-operator gateway` binary reading a real kube-apiserver
 * (started here) for its endpoint, deployed model, Service and EndpointSlice, as in production.
 * Bounded in count and time.
 *
 *   npx tsx bench/gateway.ts [--rate 1000] [--requests 5000] [--blocks 5] [--max-seconds 120] [--yardstick]
 *
 * `--yardstick` adds a third arm in the same alternation: a do-nothing node:http + undici forwarder
 * (bare-forwarder.ts, own process, beside the gateway) in front of the same model server in the model
 * host, the floor any gateway built on these parts pays on this machine (its CPU per call and added latency are printed, not recorded).
 *
 * Needs dist/ (`npm run build`; `npm run bench` builds). EO_BENCH_CPU_PROF=1 writes a V8 CPU profile
 * of the gateway process to /tmp/eo-gateway-prof/; EO_BENCH_GATEWAY_NODE_FLAGS='--trace-gc ...' adds node
 * flags to the chart's (GATEWAY_NODE_FLAGS) for the gateway process (its non-JSON output lines go to
 * stderr prefixed [gateway]).
 */
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startDemoModelServer } from '../dev/models/demo/index.js';
import { startBareForwarder } from './bare-forwarder.js';
import {
  openLoop,
  pctOf,
  RESOURCE_NAME,
  startGatewayBinary,
  startHelperProcess,
  withGatewayBenchWorld,
} from './gateway-fixture.js';
import type { ControlPlane } from '../dev/cluster/index.js';
import { cpuSecondsOf } from './process-cpu.js';
import { recordResults } from './results.js';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'driver' },
    host: { type: 'string' },
    upstream: { type: 'string' },
    yardstick: { type: 'boolean', default: false },
    rate: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '5000' },
    blocks: { type: 'string', default: '5' },
    'max-seconds': { type: 'string', default: '120' },
  },
});
const NS = 'bench-gateway';
const MODEL = 'fraud';
const BODY = JSON.stringify({
  instances: [{ amount: 240, hourOfDay: 23, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 5 }],
});

/** Child roles report `{port}` and answer 'cpu' with their CPU microseconds. */
function serveCpu(): void {
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ cpuMicros: u.user + u.system });
    } else process.exit(0);
  });
}

async function roleModel(): Promise<void> {
  const server = await startDemoModelServer({
    protocol: 'KServeV1',
    modelName: MODEL,
    version: 'v1',
    host: values.host,
  });
  process.send?.({ port: server.port });
  serveCpu();
}

async function roleBare(): Promise<void> {
  const forwarder = await startBareForwarder(values.upstream ?? '', `/v1/models/${MODEL}:predict`);
  process.send?.({ port: forwarder.port });
  serveCpu();
}

/** A role of this file in a process of its own; with `modelHost`, run in the control plane's model host. */
function start(
  role: string,
  extra: string[] = [],
  modelHost?: ControlPlane['modelHost'],
): Promise<{ child: ChildProcess; port: number }> {
  return startHelperProcess(new URL(import.meta.url).pathname, ['--role', role, ...extra], {
    ...(modelHost !== undefined ? { modelHost } : {}),
    what: role,
  });
}

function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve((m as { cpuMicros: number }).cpuMicros));
    child.send('cpu');
  });
}

async function driver(): Promise<void> {
  const rate = Number(values.rate);
  const total = Number(values.requests);
  const blocks = Number(values.blocks);
  const maxMs = Number(values['max-seconds']) * 1000;
  // In the model host, at its address: the apiserver refuses loopback addresses in EndpointSlices.
  await withGatewayBenchWorld(
    'B6',
    { namespace: NS, model: MODEL, resourceName: RESOURCE_NAME },
    maxMs,
    (host) => start('model', ['--host', host.address], host),
    async ({ plane, client, model, children }) => {
      const modelAddress = plane.modelHost.address;
      const gateway = await startGatewayBinary(plane.kubeconfigPath, NS, ['--health-port=-1', '--auth=none']);
      children.push(gateway.child);
      // Beside the gateway, dialling the model server where the gateway does.
      const bare = values.yardstick
        ? await start('bare', ['--upstream', `http://${modelAddress}:${model.port}`])
        : undefined;
      if (bare !== undefined) children.push(bare.child);
      client.close();

      const agent = new Agent({ keepAlive: true, maxSockets: 64 });
      const send = (host: string, port: number, path: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const started = process.hrtime.bigint();
          const req = request(
            {
              host,
              port,
              method: 'POST',
              path,
              agent,
              headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) },
            },
            (res) => {
              res.resume();
              res.on('end', () =>
                res.statusCode === 200
                  ? resolve(Number(process.hrtime.bigint() - started) / 1e6)
                  : reject(new Error(`${path}: HTTP ${res.statusCode}`)),
              );
            },
          );
          req.on('error', reject);
          req.end(BODY);
        });
      const direct = (): Promise<number> => send(modelAddress, model.port, `/v1/models/${MODEL}:predict`);
      const viaGateway = (): Promise<number> => send('127.0.0.1', gateway.port, `/v1/${RESOURCE_NAME}:predict`);
      const run = (call: () => Promise<number>, count: number): Promise<number[]> => openLoop(call, count, rate);

      await run(direct, 500);
      await run(viaGateway, 1000); // warm-up: JIT, pools, caches
      const viaBare = (): Promise<number> => send('127.0.0.1', bare?.port ?? 0, `/v1/${RESOURCE_NAME}:predict`);
      if (bare !== undefined) await run(viaBare, 1000);
      const perBlock = Math.ceil(total / blocks);
      const latDirect: number[] = [];
      const latGateway: number[] = [];
      let gatewayCpu = 0;
      let modelCpu = 0;
      const latBare: number[] = [];
      let bareCpu = 0;
      const blockP99: string[] = [];
      const t0 = performance.now();
      for (let b = 0; b < blocks && performance.now() - t0 < maxMs; b++) {
        const modelBefore = await cpuOf(model.child);
        latDirect.push(...(await run(direct, perBlock)));
        modelCpu += (await cpuOf(model.child)) - modelBefore;
        const before = cpuSecondsOf(gateway.child.pid ?? 0);
        const g = await run(viaGateway, perBlock);
        latGateway.push(...g);
        gatewayCpu += (cpuSecondsOf(gateway.child.pid ?? 0) - before) * 1e6;
        const d = latDirect.slice(-perBlock);
        blockP99.push(`${pctOf(d, 99).toFixed(1)}/${pctOf(g, 99).toFixed(1)}`);
        if (bare !== undefined) {
          const bareBefore = await cpuOf(bare.child);
          latBare.push(...(await run(viaBare, perBlock)));
          bareCpu += (await cpuOf(bare.child)) - bareBefore;
        }
      }
      const pct = pctOf;
      const d50 = pct(latDirect, 50);
      const d99 = pct(latDirect, 99);
      const g50 = pct(latGateway, 50);
      const g99 = pct(latGateway, 99);
      const cpuPerRequestUs = gatewayCpu / latGateway.length;
      // A yardstick from the same run and machine load: the model server's own CPU per direct call
      // (one node:http exchange plus the model), against the gateway's two exchanges plus routing.
      const modelCpuPerRequestUs = modelCpu / latDirect.length;
      const r3 = (x: number): number => Number(x.toFixed(3));
      const conditions = `${latGateway.length} calls per arm at ${rate}/s offered open-loop, ${blocks} alternating blocks, HTTP/1.1 keep-alive, the model server in the model host (veth pair), the gateway on loopback; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${cpus().length} cores`;
      console.log(`B6 gateway: ${conditions}`);
      console.log(`  direct  ms: p50 ${d50.toFixed(3)}  p99 ${d99.toFixed(3)}`);
      console.log(`  gateway ms: p50 ${g50.toFixed(3)}  p99 ${g99.toFixed(3)}`);
      console.log(
        `  added   ms: p50 ${(g50 - d50).toFixed(3)} (goal <= 0.3)  p99 ${(g99 - d99).toFixed(3)} (goal <= 1)`,
      );
      console.log(
        `  gateway CPU per request: ${cpuPerRequestUs.toFixed(1)} µs (goal <= 100); the model server's per direct call: ${modelCpuPerRequestUs.toFixed(1)} µs`,
      );
      console.log(`  p99 per block, direct/gateway ms: ${blockP99.join('  ')}`);
      if (latBare.length > 0) {
        const b50 = pct(latBare, 50);
        const b99 = pct(latBare, 99);
        console.log(
          `  yardstick (bare node:http + undici forwarder) ms: p50 ${b50.toFixed(3)}  p99 ${b99.toFixed(3)}; added p50 ${(b50 - d50).toFixed(3)}  p99 ${(b99 - d99).toFixed(3)}; CPU per request ${(bareCpu / latBare.length).toFixed(1)} µs`,
        );
      }
      recordResults(
        [
          {
            id: 'B6.gateway.added_p50',
            name: 'latency the gateway adds to a predict call, median',
            value: r3(g50 - d50),
            unit: 'ms',
            goal: { op: '<=', value: 0.3 },
            baseline: { value: r3(d50), name: 'direct call p50, ms' },
            notes: conditions,
          },
          {
            id: 'B6.gateway.added_p99',
            name: 'latency the gateway adds to a predict call, 99th percentile',
            value: r3(g99 - d99),
            unit: 'ms',
            goal: { op: '<=', value: 1 },
            baseline: { value: r3(d99), name: 'direct call p99, ms' },
          },
          {
            id: 'B6.gateway.cpu_per_request',
            name: 'gateway process CPU (user+system) per predict call',
            value: Number(cpuPerRequestUs.toFixed(1)),
            unit: 'µs',
            goal: { op: '<=', value: 100 },
            baseline: {
              value: Number(modelCpuPerRequestUs.toFixed(1)),
              name: 'model server CPU per direct call (node:http + the model), µs',
            },
          },
        ],
        {
          gateway: {
            direct: { p50: r3(d50), p90: r3(pct(latDirect, 90)), p99: r3(d99) },
            viaGateway: { p50: r3(g50), p90: r3(pct(latGateway, 90)), p99: r3(g99) },
          },
        },
      );
      agent.destroy();
    },
  );
}

if (values.role === 'model') await roleModel();
else if (values.role === 'bare') await roleBare();
else await driver();
