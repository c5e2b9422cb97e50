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
import { recordResults } from './results.js';
import { threadCpuDelta, threadCpuNanos } from './process-cpu.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { SignInContext } from '../src/signin/context.js';
import { startServeChild } from './serve-child.js';

const SECONDS = Number(process.env['BENCH_FLOOD_SECONDS'] ?? 10);
const FLOOD = Number(process.env['BENCH_FLOOD_CONCURRENCY'] ?? 300);
const INTERVAL_MS = 250;
const PASSWORD = 'bench password';

async function serve(): Promise<void> {
  const index = new IdentityIndex();
  index.upsertSecret({ metadata: { name: 'pw' }, data: { password: Buffer.from(await hashPassword(PASSWORD, DEFAULT_ARGON2_PARAMS)).toString('base64') } });
  index.upsertShop({ metadata: { name: 'shop-1' }, spec: { displayName: 'Shop 1', code: 'S-1' } });
  index.upsertShopUser({
    metadata: { name: 'till' },
    spec: { email: 'till@example.com', displayName: 'Till', passwordSecretRef: { name: 'pw', key: 'password' }, memberships: [{ shop: 'shop-1', role: 'cashier' }] },
  });
  const { app, context } = await buildSignInApp({ directory: index, sessions: new MemorySessionStore(), signingKeys: new MemorySigningKeyStore(), logger: false });
  if (process.env['EO_BENCH_DIAG']) diagnose(app, context);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`);
  process.stdin.on('data', () => undefined).on('end', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0)); // an exit, not a kill: --cpu-prof writes its profile
}

function diagnose(app: FastifyInstance, context: SignInContext): void {
  const eld = monitorEventLoopDelay({ resolution: 5 });
  eld.enable();
  const times: Record<string, { wait: number[]; run: number[] }> = {};
  const admit = context.verifications.admit.bind(context.verifications);
  context.verifications.admit = (client: string) => {
    const a = admit(client);
    if (!a.admitted) return a;
    const t0 = performance.now();
    const run = a.ticket.run.bind(a.ticket);
    return { admitted: true, ticket: { cancel: a.ticket.cancel, run: <T>(verify: () => Promise<T>) => run(async () => {
      const t1 = performance.now();
      try { return await verify(); } finally {
        const t = (times[client] ??= { wait: [], run: [] });
        t.wait.push(t1 - t0); t.run.push(performance.now() - t1);
      }
    }) } };
  };
  const totals: number[] = [];
  const after: number[] = [];
  const started = new WeakMap<object, number>();
  app.addHook('onRequest', async (request) => { if (request.ip === '127.0.0.3') started.set(request.raw, performance.now()); });
  app.addHook('onSend', async (request) => { const t = started.get(request.raw); if (t !== undefined) after.push(performance.now() - t); });
  app.addHook('onResponse', async (request) => { const t = started.get(request.raw); if (t !== undefined) totals.push(performance.now() - t); });
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    if (!d.includes('diag')) return;
    const q = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} p99 ${percentile(xs, 99).toFixed(1)} max ${Math.max(...xs).toFixed(1)} n ${xs.length}`;
    const out = {
      eld: `p50 ${(eld.percentile(50) / 1e6).toFixed(1)} p99 ${(eld.percentile(99) / 1e6).toFixed(1)} max ${(eld.max / 1e6).toFixed(1)} mean ${(eld.mean / 1e6).toFixed(1)} ms`,
      clients: Object.fromEntries(Object.entries(times).map(([c, t]) => [c, { wait: q(t.wait), run: q(t.run) }])),
      legitServerTotal: q(totals), legitToOnSend: q(after),
    };
    process.stderr.write(`DIAG ${JSON.stringify(out, null, 1)}\n`);
    eld.reset(); for (const k of Object.keys(times)) delete times[k]; totals.length = 0; after.length = 0;
  });
}

async function login(agent: Agent, port: number, email: string, password: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await request(`http://127.0.0.1:${port}/auth/pos/login`, {
    method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }),
  });
  await res.body.dump();
  return { status: res.statusCode, ms: performance.now() - started };
}

/** The right password every INTERVAL_MS from 127.0.0.3 for SECONDS: each login's status and latency. */
async function steadyLogins(port: number): Promise<{ status: number; ms: number }[]> {
  const agent = new Agent({ localAddress: '127.0.0.3' });
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

function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function main(): Promise<void> {
  const server = startServeChild(fileURLToPath(import.meta.url), process.env['EO_BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=/tmp/eo-signin-prof'] : []);
  try {
    const { port } = JSON.parse(await server.nextLine()) as { port: number };
    await steadyLogins(port).then(() => undefined, () => undefined); // warm-up (JIT, dummy hashes)
    const alone = await steadyLogins(port);
    const attacker = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--attack', String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const answers = new Promise<Record<string, number>>((resolve) => createInterface({ input: attacker.stdout }).once('line', (l) => resolve(JSON.parse(l) as Record<string, number>)));
    await new Promise((r) => setTimeout(r, 1_500));
    const diag = process.env['EO_BENCH_DIAG'] !== undefined;
    if (diag) server.child.stdin.write('diag\n');
    const threadsBefore = threadCpuNanos(server.child.pid ?? 0);
    const attackerBefore = threadCpuNanos(attacker.pid ?? 0);
    const floodStart = performance.now();
    const during = await steadyLogins(port);
    if (diag) {
      const wall = performance.now() - floodStart;
      server.child.stdin.write('diag\n');
      console.log(`flood window ${wall.toFixed(0)} ms; server threads CPU ms: ${JSON.stringify(threadCpuDelta(server.child.pid ?? 0, threadsBefore, threadCpuNanos(server.child.pid ?? 0)))}`);
      console.log(`attacker threads CPU ms: ${JSON.stringify(threadCpuDelta(attacker.pid ?? 0, attackerBefore, threadCpuNanos(attacker.pid ?? 0)))}`);
      console.log(`legit: ${during.map((x) => x.ms.toFixed(0)).join(' ')}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    attacker.stdin.end();
    const floodCodes = new Map(Object.entries(await answers).map(([c, k]) => [Number(c), k] as const));
    const ms = (xs: { ms: number }[]): number[] => xs.map((x) => x.ms);
    const p99 = percentile(ms(during), 99);
    const refused = during.filter((x) => x.status === 429).length;
    const failed = during.filter((x) => x.status !== 200 && x.status !== 429).length;
    const codes = [...floodCodes.entries()].sort((a, b) => a[0] - b[0]).map(([c, k]) => `${k} × ${c}`).join(', ');
    console.log(`other address alone: ${alone.length} logins, p50 ${percentile(ms(alone), 50).toFixed(0)} ms, p99 ${percentile(ms(alone), 99).toFixed(0)} ms`);
    console.log(`during a flood of ${FLOOD} concurrent unknown-email logins: ${during.length} logins, p50 ${percentile(ms(during), 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, ${refused} × 429, ${failed} other failures`);
    console.log(`the flood's answers: ${codes}`);
    recordResults([
      { id: 'B5.flood.other_p99', name: `correct logins every ${INTERVAL_MS} ms from another address during ${FLOOD} concurrent unknown-email logins, p99`, value: Number(p99.toFixed(1)), unit: 'ms', goal: { op: '<=', value: 500 },
        baseline: { value: Number(percentile(ms(alone), 99).toFixed(1)), name: 'the same logins without the flood, p99' }, notes: `${during.length} logins; flood answers: ${codes}` },
      { id: 'B5.flood.other_429', name: 'correct logins from the other address answered 429 during the flood', value: refused, unit: 'count', goal: { op: '==', value: 0 }, notes: `${failed} other non-200 answers` },
    ], { floodAnswers: Object.fromEntries(floodCodes) });
  } finally {
    server.child.stdin.end();
    server.child.kill();
  }
}

/** Attacker mode: FLOOD logins for unknown emails in flight from 127.0.0.2 until stdin ends; prints the answers' status counts. */
async function attack(port: number): Promise<void> {
  const agent = new Agent({ localAddress: '127.0.0.2', connections: FLOOD });
  const codes: Record<string, number> = {};
  let flooding = true;
  let n = 0;
  process.stdin.on('data', () => undefined).on('end', () => (flooding = false));
  await Promise.all(Array.from({ length: FLOOD }, async () => {
    while (flooding) {
      const r = await login(agent, port, `nobody-${n++}@example.com`, 'guess').catch(() => ({ status: 0, ms: 0 }));
      codes[r.status] = (codes[r.status] ?? 0) + 1;
    }
  }));
  process.stdout.write(`${JSON.stringify(codes)}\n`);
  await agent.close();
}

const attackAt = process.argv.indexOf('--attack');
if (process.argv.includes('--serve')) await serve();
else if (attackAt >= 0) await attack(Number(process.argv[attackAt + 1]));
else await main();
