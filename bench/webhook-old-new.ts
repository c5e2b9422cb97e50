/**
 * B4-old-new: the admission webhook server of this checkout against an earlier commit's (`--old`, default
 * 08248cf: the last before the webhook moved onto the server factory's HTTP/2 port and front door, 0e82437),
 * side by side in one run. Issue 49's goal: p50 and CPU per review, new ÷ old ≤ 1.10.
 *
 * Arms, each a compiled webhook server (webhook-server-process.ts) in its own process, on the same certificate:
 *   old (the reference) and oldB (a second old process: the A/A floor);
 *   new, called over HTTP/1.1 as the old one is (the same client, the same connection kind), which is also how
 *   kube-apiserver calls it: the port offers no other protocol (src/webhook/server.ts says why); run with the
 *   node flags the chart now gives the operator (OPERATOR_NODE_FLAGS), where the old chart gave none;
 *   `--variant name=root`: another compiled tree (one change toggled), called as new is.
 * The reviews are webhook.ts's (webhook-reviews.ts), in turn. `--rounds` of fresh processes, started and warmed
 * up in an order that rotates with the round. CPU per review: blocks in which every arm is called, review by
 * review in a random order, at `--rate` each (paired-arms.ts everyArmBlocks: per-thread CPU in ns from
 * schedstat), so every arm is as busy as the others; with the old server as a pair's constant reference
 * instead (comparePaired), the arms idle between their blocks and the A/A pair read +60 to +260 µs. The
 * difference to old is a mean over blocks with a two-level bootstrap interval (bootstrap.ts). p50: every
 * arm's reviews interleaved one at a time in a random order (paired-latency.ts), so no review queues behind
 * another and the machine's moments fall on every arm alike; the figure is an arm's p50 over the old server's.
 *
 *   npx tsx bench/webhook-old-new.ts [--old 08248cf] [--rate 100] [--requests 3000] [--blocks 6] [--rounds 2] [--warmup 500] [--latency-cycles 2000] [--max-seconds 420] [--variant name=root]...
 *
 * Needs dist/ (`npm run build`; `npm run bench` builds). EO_BENCH_CPU_PROF=1 writes each server's V8 profile to
 * /tmp/eo-webhook-old-new-prof/<arm>/. Bounded in count and time; loopback only.
 */
import { Agent, request } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { issueCertificates, servingIdentity } from '../src/webhook/certificates.js';
import { openLoop, startHelperProcess, stopChildren } from './gateway-fixture.js';
import { buildOld } from './old-build.js';
import { meanInterval, type MeanInterval } from './bootstrap.js';
import { everyArmBlocks, ok, type Arm, type ArmBlocks, type Sent } from './paired-arms.js';
import {
  addedP50,
  interleavedLatencies,
  mergeLatencyRounds,
  type AddedP50,
  type BlockLatencies,
} from './paired-latency.js';
import type { NodeThreadsCpu } from './process-cpu.js';
import { recordResults } from './results.js';
import { reviewBodies } from './webhook-reviews.js';
import { OPERATOR_NODE_FLAGS } from '../src/deploy/workload.js';

const { values } = parseArgs({
  options: {
    old: { type: 'string', default: '08248cf' },
    rate: { type: 'string', default: '100' },
    requests: { type: 'string', default: '3000' },
    blocks: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '500' },
    'latency-cycles': { type: 'string', default: '2000' },
    'latency-blocks': { type: 'string', default: '10' },
    'max-seconds': { type: 'string', default: '420' },
    rounds: { type: 'string', default: '2' },
    variant: { type: 'string', multiple: true, default: [] },
  },
});
const PATH = '/validate?timeout=5s';
const SERVER = fileURLToPath(new URL('webhook-server-process.ts', import.meta.url));
const bodies = reviewBodies.map((review, i) => review(`bench-${i}`));
const bodyOf = (i: number): string => bodies[i % bodies.length] as string;

/** An answer that is a review: 200 and a response for the review's uid, or the status it answered. */
function checked(status: number, text: string): number {
  if (status !== 200) return status;
  const response = (JSON.parse(text) as { response?: { uid?: unknown } }).response;
  return typeof response?.uid === 'string' ? 200 : 502;
}

function sendHttp1(agent: Agent, port: number, i: number): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const body = bodyOf(i);
    const started = process.hrtime.bigint();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: PATH,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve([
            Number(process.hrtime.bigint() - started) / 1e6,
            checked(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')),
          ]),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function driver(): Promise<void> {
  const rate = Number(values.rate);
  const maxMs = Number(values['max-seconds']) * 1000;
  const oldRoot = buildOld(values.old);
  const certs = await issueCertificates(
    { action: 'renew-all', reason: 'bench' },
    undefined,
    servingIdentity('endpoint-operator-webhook', 'endpoint-operator-system', { host: '127.0.0.1' }),
    new Date(),
    { caDays: 1, servingDays: 1 },
  );
  const dir = await mkdtemp(join(tmpdir(), 'eo-webhook-old-new-'));
  const [certFile, keyFile] = [join(dir, 'tls.crt'), join(dir, 'tls.key')];
  await writeFile(certFile, certs.cert);
  await writeFile(keyFile, certs.key, { mode: 0o600 });
  const agent = new Agent({ keepAlive: true, maxSockets: 16, ca: certs.caBundle });
  const children: ChildProcess[] = [];
  const deadline = setTimeout(() => {
    console.error(`B4-old-new exceeded ${maxMs / 1000} s; stopping`);
    for (const c of children) c.kill('SIGKILL');
    process.exit(2);
  }, maxMs + 60_000);
  try {
    const start = async (
      name: string,
      root: string | undefined,
      chartFlags: readonly string[],
    ): Promise<{ port: number; pid: number }> => {
      const prof = process.env['EO_BENCH_CPU_PROF']
        ? ['--cpu-prof', `--cpu-prof-dir=/tmp/eo-webhook-old-new-prof/${name}`]
        : [];
      const { child, port } = await startHelperProcess(
        SERVER,
        [...(root === undefined ? [] : ['--root', root]), '--cert', certFile, '--key', keyFile],
        { what: `webhook server ${name}`, nodeFlags: [...chartFlags, ...prof] },
      );
      children.push(child);
      return { port, pid: child.pid ?? 0 };
    };
    const http1 = async (
      name: string,
      root: string | undefined,
      chartFlags: readonly string[] = OPERATOR_NODE_FLAGS,
    ): Promise<Arm> => {
      const { port, pid } = await start(name, root, chartFlags);
      return { name, pid, call: (i) => sendHttp1(agent, port, i) };
    };
    // This code runs as the chart runs the operator (OPERATOR_NODE_FLAGS); the old tree as its chart ran it, with none.
    // --variant name=root: another compiled tree called and run as `new` is (one change toggled, to find what moved).
    const starters: [string, () => Promise<Arm>][] = [
      ['old', () => http1('old', oldRoot, [])],
      ['oldB', () => http1('oldB', oldRoot, [])],
      ['new', () => http1('new', undefined)],
      ...values.variant.map((v): [string, () => Promise<Arm>] => {
        const [name = v, root] = v.split('=', 2);
        return [name, () => http1(name, root)];
      }),
    ];
    const rounds = Number(values.rounds);
    const blocks = Number(values.blocks);
    const latencyBlocks = Number(values['latency-blocks']);
    const cpuRounds: ArmBlocks[][] = [];
    const latencyRounds: BlockLatencies[] = [];
    for (let r = 0; r < rounds; r++) {
      // Fresh processes each round, started and warmed up in an order that rotates with the round.
      const order = starters.map((_, k) => starters[(k + r) % starters.length] as [string, () => Promise<Arm>]);
      const started = new Map<string, Arm>();
      for (const [name, startArm] of order) started.set(name, await startArm());
      for (const [name] of order) {
        const a = started.get(name) as Arm;
        ok(await openLoop(a.call, Number(values.warmup), rate), `warm-up ${a.name}`);
      }
      const arms = starters.map(([name]) => started.get(name) as Arm);
      cpuRounds.push(
        await everyArmBlocks(arms, {
          perBlock: Math.ceil(Number(values.requests) / rounds / blocks),
          blocks,
          rate,
          maxMs: maxMs / 2 / rounds,
        }),
      );
      latencyRounds.push(
        await interleavedLatencies(arms, {
          perBlock: Math.ceil(Number(values['latency-cycles']) / rounds / latencyBlocks),
          blocks: latencyBlocks,
          maxMs: maxMs / 2 / rounds,
        }),
      );
      await stopChildren(children.splice(0));
    }
    const latency = mergeLatencyRounds(latencyRounds);
    const p50 = (name: string): AddedP50 =>
      addedP50(latency.blocks.get(name) ?? [], latency.blocks.get('old') ?? [], latency.roundOfBlock, {
        resamples: 500,
      });
    const blocksOf = (name: string): NodeThreadsCpu[] =>
      cpuRounds.flatMap((round) => round.find((a) => a.arm === name)?.blocks ?? []);
    const cpuRoundOfBlock = cpuRounds.flatMap((round, r) => (round[0]?.blocks ?? []).map(() => r));
    const meanOf = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    const oldBlocks = blocksOf('old');
    const oldCpu = meanOf(oldBlocks.map((b) => b.total));
    /** The arm's CPU per review minus old's, block by block, with its interval (rounds, then blocks). */
    const cpuOver = (name: string): { cpuUs: number; mainUs: number; over: MeanInterval } => {
      const arm = blocksOf(name);
      return {
        cpuUs: meanOf(arm.map((b) => b.total)),
        mainUs: meanOf(arm.map((b, i) => b.main - (oldBlocks[i]?.main ?? 0))),
        over: meanInterval(
          arm.map((b, i) => b.total - (oldBlocks[i]?.total ?? 0)),
          cpuRoundOfBlock,
        ),
      };
    };
    const aa = cpuOver('oldB');
    const aaP50 = p50('oldB');
    const load = loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    const interval = (m: MeanInterval): string =>
      `${m.mean.toFixed(1)} µs [95 % ${m.low95.toFixed(1)}, ${m.high95.toFixed(1)}] (rounds ${m.perRound.map((x) => x.toFixed(1)).join(', ')})`;
    const conditions = `one run, ${rounds} rounds of fresh processes, each webhook server a compiled process of its own (old: ${values.old}), ${oldBlocks.length} blocks in which every arm got ${Math.ceil(Number(values.requests) / rounds / blocks)} reviews at ${rate}/s each, in a random order, open loop, HTTPS keep-alive on loopback; CPU per thread from schedstat; p50 from ${latency.roundOfBlock.length} blocks of every arm's reviews interleaved one at a time; load average ${load} on ${cpus().length} cores`;
    console.log(`B4-old-new: ${conditions}`);
    console.log(
      `  old: CPU ${oldCpu.toFixed(1)} µs/review, p50 ${aaP50.referenceP50Ms.toFixed(3)} ms; A/A (a second old process minus the first): CPU ${interval(aa.over)}, p50 ${aaP50.addedMs.toFixed(3)} ms`,
    );
    const armNames = starters.map(([name]) => name).filter((n) => n !== 'old' && n !== 'oldB');
    const figures = armNames.map((name) => {
      const c = cpuOver(name);
      const l = p50(name);
      const cpuRatio = c.cpuUs / oldCpu;
      const p50Ratio = l.p50Ms / l.referenceP50Ms;
      console.log(
        `  ${name}: CPU ${c.cpuUs.toFixed(1)} µs/review, over old ${interval(c.over)}, main thread ${c.mainUs.toFixed(1)}; ÷ old ${cpuRatio.toFixed(3)}; p50 ${l.p50Ms.toFixed(3)} ms (${l.addedMs.toFixed(3)} [95 % ${l.low95Ms.toFixed(3)}, ${l.high95Ms.toFixed(3)}]), ÷ old ${p50Ratio.toFixed(3)}`,
      );
      return { name, c, l, cpuRatio, p50Ratio };
    });
    const r3 = (x: number): number => Number(x.toFixed(3));
    recordResults(
      [
        ...figures.flatMap(({ name, c, l, cpuRatio, p50Ratio }) => {
          if (name !== 'new') return [];
          const id = 'http1';
          const label = 'over HTTP/1.1, as the old one and as kube-apiserver calls it';
          return [
            {
              id: `B4.webhook_old_new.${id}.cpu_ratio`,
              name: `webhook server CPU per review, this checkout ${label} ÷ ${values.old}, same run`,
              value: r3(cpuRatio),
              unit: '×',
              goal: { op: '<=', value: 1.1 } as const,
              notes: `new ${c.cpuUs.toFixed(1)} µs, old ${oldCpu.toFixed(1)} µs, difference ${interval(c.over)}; A/A ${interval(aa.over)}; ${conditions}`,
            },
            {
              id: `B4.webhook_old_new.${id}.p50_ratio`,
              name: `webhook review latency, median, this checkout ${label} ÷ ${values.old}, same run`,
              value: r3(p50Ratio),
              unit: '×',
              goal: { op: '<=', value: 1.1 } as const,
              notes: `new ${l.p50Ms.toFixed(3)} ms, old ${l.referenceP50Ms.toFixed(3)} ms, difference 95 % [${l.low95Ms.toFixed(3)}, ${l.high95Ms.toFixed(3)}]; A/A ${aaP50.addedMs.toFixed(3)} ms; one review in flight`,
            },
          ];
        }),
        {
          id: 'B4.webhook_old_new.aa_cpu',
          name: 'A/A control: CPU per review of a second old webhook process minus the first',
          value: Number(aa.over.mean.toFixed(1)),
          unit: 'µs',
          notes: `95 % [${aa.over.low95.toFixed(1)}, ${aa.over.high95.toFixed(1)}] (rounds, then blocks); old ${oldCpu.toFixed(1)} µs/review`,
        },
      ],
      {
        webhookOldNew: Object.fromEntries(
          figures.map((f) => [
            f.name,
            {
              cpuUs: Number(f.c.cpuUs.toFixed(1)),
              oldCpuUs: Number(oldCpu.toFixed(1)),
              p50Ms: r3(f.l.p50Ms),
              oldP50Ms: r3(f.l.referenceP50Ms),
            },
          ]),
        ),
      },
    );
  } finally {
    clearTimeout(deadline);
    agent.destroy();
    await stopChildren(children);
    await rm(dir, { recursive: true, force: true });
  }
}

await driver();
