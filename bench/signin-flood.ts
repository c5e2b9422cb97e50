/**
 * B5-flood (`npm run bench -- signin`): one address floods the sign-in API with logins for unknown
 * emails (each would cost an argon2id verification, to keep timing equal) while another address signs
 * in with the right password every 250 ms. Goal: the other address's p99 ≤ 0.5 s and not one 429.
 * The two clients are two source addresses on loopback (127.0.0.2, 127.0.0.3; the server trusts no
 * proxy, so the TCP peer is the client). The server runs in its own process (serve-child.ts) with the
 * default limits (verifications: as many at once as cores, 4 per client), and so does the attacker
 * (`--attack PORT`), so that its thousands of requests a second do not delay this process's clock
 * and the measured client's answers. Bounded: a baseline phase (the other address alone) and a flood
 * phase, BENCH_FLOOD_SECONDS each (default 10 s).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { IdentityIndex } from '../src/signin/identity-index.js';
import { DEFAULT_ARGON2_PARAMS, hashPassword } from '../src/signin/passwords.js';
import { buildSignInApp } from '../src/signin/server.js';
import { MemorySessionStore } from '../src/signin/sessions.js';
import { MemorySigningKeyStore } from '../src/signin/signing-key.js';
import { threadCpuDelta, threadCpuOf, type ThreadCpu } from './process-cpu.js';
import { recordResults } from './results.js';
import { startServeChild } from './serve-child.js';
import { installFloodProbe, percentile, type FloodStats } from './signin-flood-probe.js';

const SECONDS = Number(process.env['BENCH_FLOOD_SECONDS'] ?? 10);
const FLOOD = Number(process.env['BENCH_FLOOD_CONCURRENCY'] ?? 300);
const INTERVAL_MS = 250;
const PASSWORD = 'bench password';
const ATTACKER = '127.0.0.2';
const MEASURED = '127.0.0.3';
const DIAGNOSE = process.env['EO_BENCH_DIAG'] !== undefined;

async function serve(): Promise<void> {
  const index = new IdentityIndex();
  index.upsertSecret({
    metadata: { name: 'pw' },
    data: { password: Buffer.from(await hashPassword(PASSWORD, DEFAULT_ARGON2_PARAMS)).toString('base64') },
  });
  index.upsertShop({ metadata: { name: 'shop-1' }, spec: { displayName: 'Shop 1', code: 'S-1' } });
  index.upsertShopUser({
    metadata: { name: 'till' },
    spec: {
      email: 'till@example.com',
      displayName: 'Till',
      passwordSecretRef: { name: 'pw', key: 'password' },
      memberships: [{ shop: 'shop-1', role: 'cashier' }],
    },
  });
  const { app, context } = await buildSignInApp({
    directory: index,
    sessions: new MemorySessionStore(),
    signingKeys: new MemorySigningKeyStore(),
    logger: false,
  });
  installFloodProbe(app, context, MEASURED, DIAGNOSE);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`,
  );
  process.stdin.on('data', () => undefined).on('end', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0)); // an exit, not a kill: --cpu-prof writes its profile
}

async function login(
  agent: Agent,
  port: number,
  email: string,
  password: string,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await request(`http://127.0.0.1:${port}/auth/pos/login`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  await res.body.dump();
  return { status: res.statusCode, ms: performance.now() - started };
}

/** The right password every INTERVAL_MS from 127.0.0.3 for SECONDS: each login's status and latency. */
async function steadyLogins(port: number): Promise<{ status: number; ms: number }[]> {
  const agent = new Agent({ localAddress: MEASURED });
  const out: Promise<{ status: number; ms: number }>[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  while (performance.now() < deadline) {
    out.push(login(agent, port, 'till@example.com', PASSWORD));
    await new Promise((r) => setTimeout(r, INTERVAL_MS));
  }
  const results = await Promise.all(out);
  await agent.close();
  return results;
}

/** CPU ms of the server's main thread and of its other threads (libuv's pool running argon2, GC helpers) between two samples. */
/** Server CPU ms between two samples: its main thread (the event loop) and every other thread (argon2 on libuv's pool, GC). */
function serverCpu(
  pid: number,
  before: readonly ThreadCpu[],
  after: readonly ThreadCpu[],
): { main: number; others: number } {
  const { total, main } = threadCpuDelta(pid, before, after);
  return { main: main / 1e6, others: (total - main) / 1e6 };
}

async function main(): Promise<void> {
  const server = startServeChild(
    fileURLToPath(import.meta.url),
    process.env['EO_BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=/tmp/eo-signin-prof'] : [],
  );
  const stats = async (): Promise<FloodStats> => {
    server.child.stdin.write('stats\n');
    return JSON.parse(await server.nextLine()) as FloodStats;
  };
  try {
    const { port } = JSON.parse(await server.nextLine()) as { port: number };
    const serverPid = server.child.pid ?? 0;
    await steadyLogins(port).then(
      () => undefined,
      () => undefined,
    ); // warm-up (JIT, dummy hashes)
    const alone = await steadyLogins(port);
    const threadsBefore = threadCpuOf(serverPid);
    const attacker = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--attack', String(port)],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const answers = new Promise<{ codes: Record<string, number>; cpuMs: number }>((resolve) =>
      createInterface({ input: attacker.stdout }).once('line', (l) =>
        resolve(JSON.parse(l) as { codes: Record<string, number>; cpuMs: number }),
      ),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    await stats(); // from here on: the flood phase only
    const during = await steadyLogins(port);
    const inFlood = await stats();
    attacker.stdin.end();
    const flood = await answers;
    const cpu = serverCpu(serverPid, threadsBefore, threadCpuOf(serverPid));
    const floodCodes = new Map(Object.entries(flood.codes).map(([c, k]) => [Number(c), k] as const));
    const floodAnswers = [...floodCodes.values()].reduce((a, b) => a + b, 0);
    const ms = (xs: { ms: number }[]): number[] => xs.map((x) => x.ms);
    const p99 = percentile(ms(during), 99);
    const refused = during.filter((x) => x.status === 429).length;
    const failed = during.filter((x) => x.status !== 200 && x.status !== 429).length;
    const codes = [...floodCodes.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([c, k]) => `${k} × ${c}`)
      .join(', ');
    const mainUsPerAnswer = (cpu.main * 1000) / floodAnswers;
    const eld = inFlood.eventLoopDelay;
    console.log(
      `other address alone: ${alone.length} logins, p50 ${percentile(ms(alone), 50).toFixed(0)} ms, p99 ${percentile(ms(alone), 99).toFixed(0)} ms`,
    );
    console.log(
      `during a flood of ${FLOOD} concurrent unknown-email logins: ${during.length} logins, p50 ${percentile(ms(during), 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, ${refused} × 429, ${failed} other failures`,
    );
    console.log(`the flood's answers: ${codes}`);
    const cpuNote = `server CPU over the attack: main thread ${(cpu.main / 1000).toFixed(2)} s (${mainUsPerAnswer.toFixed(1)} µs per flood answer), other threads (argon2 on libuv's pool, GC) ${(cpu.others / 1000).toFixed(2)} s; attacker process ${(flood.cpuMs / 1000).toFixed(2)} s; server event-loop delay during the flood p50 ${eld.p50.toFixed(1)} ms, p99 ${eld.p99.toFixed(1)} ms, max ${eld.max.toFixed(1)} ms`;
    console.log(cpuNote);
    if (inFlood.verifications)
      console.log(`verifications during the flood (ms, by client): ${JSON.stringify(inFlood.verifications)}`);
    if (inFlood.measuredInServer)
      console.log(
        `the other address's logins in the server, arrival to answer (ms): ${JSON.stringify(inFlood.measuredInServer)}`,
      );
    recordResults(
      [
        {
          id: 'B5.flood.other_p99',
          name: `correct logins every ${INTERVAL_MS} ms from another address during ${FLOOD} concurrent unknown-email logins, p99`,
          value: Number(p99.toFixed(1)),
          unit: 'ms',
          goal: { op: '<=', value: 500 },
          baseline: {
            value: Number(percentile(ms(alone), 99).toFixed(1)),
            name: 'the same logins without the flood, p99',
          },
          notes: `${during.length} logins, p50 ${percentile(ms(during), 50).toFixed(0)} ms; flood answers: ${codes}`,
        },
        {
          id: 'B5.flood.other_429',
          name: 'correct logins from the other address answered 429 during the flood',
          value: refused,
          unit: 'count',
          goal: { op: '==', value: 0 },
          notes: `${failed} other non-200 answers`,
        },
        {
          id: 'B5.flood.main_cpu_per_answer',
          name: 'server main-thread CPU per answer to the flood (nearly all 429s), from /proc schedstat',
          value: Number(mainUsPerAnswer.toFixed(1)),
          unit: 'µs',
          notes: cpuNote,
        },
      ],
      {
        floodAnswers: Object.fromEntries(floodCodes),
        eventLoopDelayMs: eld,
        serverCpuMs: cpu,
        attackerCpuMs: flood.cpuMs,
      },
    );
  } finally {
    server.child.stdin.end();
    server.child.kill();
  }
}

/** Attacker mode: FLOOD logins for unknown emails in flight from 127.0.0.2 until stdin ends; prints the answers' status counts. */
async function attack(port: number): Promise<void> {
  const agent = new Agent({ localAddress: ATTACKER, connections: FLOOD });
  const codes: Record<string, number> = {};
  let flooding = true;
  let n = 0;
  process.stdin.on('data', () => undefined).on('end', () => (flooding = false));
  await Promise.all(
    Array.from({ length: FLOOD }, async () => {
      while (flooding) {
        const r = await login(agent, port, `nobody-${n++}@example.com`, 'guess').catch(() => ({ status: 0, ms: 0 }));
        codes[r.status] = (codes[r.status] ?? 0) + 1;
      }
    }),
  );
  const used = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ codes, cpuMs: (used.user + used.system) / 1000 })}\n`);
  await agent.close();
}

const attackAt = process.argv.indexOf('--attack');
if (process.argv.includes('--serve')) await serve();
else if (attackAt >= 0) await attack(Number(process.argv[attackAt + 1]));
else await main();
