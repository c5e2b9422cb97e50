/**
 * B6-old-new: the gateway of this checkout against the gateway of an earlier commit (`--old`, default
 * 4b8eaec: before gRPC and the TLS port, issue 49's guard: new ÷ old ≤ 1.10), side by side in one run.
 * The old commit is compiled from `git archive` in a temporary directory (old-build.ts).
 *
 * Arms, each a compiled gateway in its own process reading the same endpoint from a real kube-apiserver
 * (started here) and calling the same model server process:
 *   old (the reference) and oldB (a second old process: the A/A floor), new;
 *   oldAuth / newAuth: --auth=token-review, warm caches, the caller's ServiceAccount token;
 *   oldTraced / newTraced: the SDK registered, OTEL_TRACES_SAMPLER=parentbased_traceidratio at 0.01
 *   (the chart's), exporting to a closed port (every arm pays the same failed exports).
 * CPU per call: paired blocks against `old` (paired-arms.ts: per-thread CPU in ns over blocks shared with the
 * reference). Latency: every arm's calls and direct calls to the model server interleaved call by call,
 * one in flight (paired-latency.ts); each arm's added p50 is its p50 minus the direct calls'.
 * Printed and recorded: each gateway's CPU per call and added p50, and new ÷ old for each pair.
 *
 *   npx tsx bench/gateway-old-new.ts [--old 4b8eaec] [--rate 1000] [--requests 6000] [--blocks 6] [--warmup 3000] [--latency-cycles 2000] [--max-seconds 240]
 *
 * Needs dist/ (`npm run build`; `npm run bench` builds). Bounded in count and time; loopback only.
 */
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { demoCallerToken } from '../dev/environment/demo-caller.js';
import { openLoop, startGatewayBinary, withGatewayBenchWorld } from './gateway-fixture.js';
import { startModelProcess } from './model-process.js';
import { buildOld } from './old-build.js';
import { comparePaired, ok, pairDifference, type Arm, type PairFigures, type Sent } from './paired-arms.js';
import { addedP50, interleavedLatencies, mergeLatencyRounds } from './paired-latency.js';
import { recordResults } from './results.js';

const { values } = parseArgs({
  options: {
    old: { type: 'string', default: '4b8eaec' },
    rate: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '6000' },
    blocks: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '3000' },
    'latency-cycles': { type: 'string', default: '2000' },
    'latency-blocks': { type: 'string', default: '10' },
    'max-seconds': { type: 'string', default: '240' },
  },
});
const NS = 'bench-gateway-old-new';
const MODEL = 'fraud';
const RESOURCE_NAME = `projects/${NS}/locations/local/endpoints/fraud`;
const BODY = JSON.stringify({
  instances: [{ amount: 240, hourOfDay: 23, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 5 }],
});

const agent = new Agent({ keepAlive: true, maxSockets: 128 });

function send(host: string, port: number, path: string, headers: Record<string, string> = {}): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      {
        host,
        port,
        method: 'POST',
        path,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve([Number(process.hrtime.bigint() - started) / 1e6, res.statusCode ?? 0]));
      },
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

async function driver(): Promise<void> {
  const rate = Number(values.rate);
  const maxMs = Number(values['max-seconds']) * 1000;
  const oldRoot = buildOld(values.old);
  await withGatewayBenchWorld(
    'B6-old-new',
    { namespace: NS, model: MODEL, resourceName: RESOURCE_NAME },
    maxMs,
    (host) => startModelProcess(host, MODEL),
    async ({ plane, client, model, children }) => {
      const token = await demoCallerToken(client, NS);
      client.close();
      const kubeconfig = plane.kubeconfigPath;
      // What a call costs, not the per-caller limit: the same flag on every gateway.
      const common = ['--health-port=-1', '--max-calls-per-caller=4096'];
      const traced = {
        ...process.env,
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
      };
      const untraced = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const path = `/v1/${RESOURCE_NAME}:predict`;
      const bearer = { authorization: `Bearer ${token}` };
      const arm = async (
        name: string,
        root: string | undefined,
        flags: readonly string[],
        env: NodeJS.ProcessEnv,
        headers: Record<string, string> = {},
      ): Promise<Arm> => {
        const started = await startGatewayBinary(kubeconfig, NS, [...common, ...flags], {
          env,
          ...(root !== undefined ? { root } : {}),
          profileDir: `/tmp/eo-gateway-old-new-prof/${name}`,
        });
        children.push(started.child);
        return { name, pid: started.child.pid ?? 0, call: () => send('127.0.0.1', started.port, path, headers) };
      };
      const reference = await arm('old', oldRoot, ['--auth=none'], untraced);
      const arms: Arm[] = [
        await arm('oldB', oldRoot, ['--auth=none'], untraced),
        await arm('new', undefined, ['--auth=none'], untraced),
        await arm('oldAuth', oldRoot, ['--auth=token-review'], untraced, bearer),
        await arm('newAuth', undefined, ['--auth=token-review'], untraced, bearer),
        await arm('oldTraced', oldRoot, ['--auth=none'], traced),
        await arm('newTraced', undefined, ['--auth=none'], traced),
      ];
      for (const a of [reference, ...arms])
        ok(await openLoop(a.call, Number(values.warmup), rate), `warm-up ${a.name}`);
      const blocks = Number(values.blocks);
      const pairs = await comparePaired(reference, arms, {
        perBlock: Math.ceil(Number(values.requests) / blocks),
        blocks,
        rate,
        maxMs: maxMs / 2,
      });
      const direct: Arm = {
        name: 'direct',
        pid: model.child.pid ?? 0,
        call: () => send(plane.modelHost.address, model.port, `/v1/models/${MODEL}:predict`),
      };
      const latencyBlocks = Number(values['latency-blocks']);
      const latency = mergeLatencyRounds([
        await interleavedLatencies([direct, reference, ...arms], {
          perBlock: Math.ceil(Number(values['latency-cycles']) / latencyBlocks),
          blocks: latencyBlocks,
          maxMs: maxMs / 2,
        }),
      ]);
      const added = (name: string): number =>
        addedP50(latency.blocks.get(name) ?? [], latency.blocks.get('direct') ?? [], latency.roundOfBlock, {
          resamples: 200,
        }).addedMs;

      const pair = (name: string): PairFigures => pairs.find((p) => p.arm === name) as PairFigures;
      const cpu = (name: string): number =>
        name === 'old' ? pairs.reduce((s, p) => s + p.referenceCpuUs, 0) / pairs.length : pair(name).cpuUs;
      const aa = pairDifference(pair('oldB'));
      const load = loadavg()
        .map((l) => l.toFixed(1))
        .join(' ');
      const conditions = `one run, every gateway a compiled process of its own (old: ${values.old}), ${pair('new').latencies.length} calls per arm in ${pair('new').blockCpuUs.length} blocks shared with the old gateway's calls at ${rate}/s each, open loop, keep-alive loopback; CPU per thread from schedstat; added p50 from ${latency.roundOfBlock.length} blocks of every arm's calls and direct calls interleaved one at a time; load average ${load} on ${cpus().length} cores`;
      const r1 = (x: number): number => Number(x.toFixed(1));
      const r3 = (x: number): number => Number(x.toFixed(3));
      console.log(`B6-old-new: ${conditions}`);
      console.log(
        `  A/A floor (a second old process minus the first): CPU ${aa.cpuUs.toFixed(1)} ± ${aa.standardErrorUs.toFixed(1)} µs/call, added p50 ${(added('oldB') - added('old')).toFixed(3)} ms`,
      );
      const comparisons = [
        ['old', 'new', 'auth off'],
        ['oldAuth', 'newAuth', 'auth on, warm caches'],
        ['oldTraced', 'newTraced', 'tracing sampled at 0.01'],
      ] as const;
      const figures = comparisons.map(([o, n, label]) => {
        const [oldCpu, newCpu, oldP50, newP50] = [cpu(o), cpu(n), added(o), added(n)];
        console.log(
          `  ${label}: CPU per call old ${oldCpu.toFixed(1)} µs, new ${newCpu.toFixed(1)} µs, new ÷ old ${(newCpu / oldCpu).toFixed(3)}; added p50 old ${oldP50.toFixed(3)} ms, new ${newP50.toFixed(3)} ms`,
        );
        return { label, o, n, oldCpu, newCpu, oldP50, newP50 };
      });
      const id = (n: string): string => n.replace(/^new/, '').toLowerCase() || 'plain';
      recordResults(
        [
          ...figures.flatMap(({ label, n, oldCpu, newCpu, oldP50, newP50 }) => [
            {
              id: `B6.old_new.${id(n)}.cpu_ratio`,
              name: `gateway CPU per predict call, this checkout ÷ ${values.old} (${label}), same run`,
              value: r3(newCpu / oldCpu),
              unit: '×',
              goal: { op: '<=', value: 1.1 } as const,
              notes: `new ${newCpu.toFixed(1)} µs, old ${oldCpu.toFixed(1)} µs; A/A ${aa.cpuUs.toFixed(1)} ± ${aa.standardErrorUs.toFixed(1)} µs; ${conditions}`,
            },
            {
              id: `B6.old_new.${id(n)}.cpu_new`,
              name: `gateway CPU per predict call, this checkout (${label})`,
              value: r1(newCpu),
              unit: 'µs',
              baseline: { value: r1(oldCpu), name: `${values.old}, same run, µs` },
            },
            {
              id: `B6.old_new.${id(n)}.added_p50_new`,
              name: `latency the gateway adds to a predict call, median, this checkout (${label})`,
              value: r3(newP50),
              unit: 'ms',
              baseline: { value: r3(oldP50), name: `${values.old}, same run, ms` },
            },
          ]),
          {
            id: 'B6.old_new.aa_cpu',
            name: 'A/A control: CPU per call of a second old gateway process minus the first',
            value: r1(aa.cpuUs),
            unit: 'µs',
            notes: `± ${aa.standardErrorUs.toFixed(1)} µs (standard error of the blocks)`,
          },
        ],
        {
          gatewayOldNew: Object.fromEntries(
            figures.map((f) => [
              f.label,
              {
                oldCpuUs: r1(f.oldCpu),
                newCpuUs: r1(f.newCpu),
                oldAddedP50Ms: r3(f.oldP50),
                newAddedP50Ms: r3(f.newP50),
              },
            ]),
          ),
        },
      );
    },
  );
  agent.destroy();
}

await driver();
