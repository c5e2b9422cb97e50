/**
 * `npx tsx bench/signin.ts`: the sign-in API on loopback.
 *  - GET /auth/pos/me requests per second as a ratio of a bare fastify JSON route (same body) served
 *    by the same process in the same run (goal ≥ 0.7): the price of the token check, the directory
 *    checks and the DTO serialisation. Also as server CPU microseconds per request, the throughput
 *    ratio of a CPU-bound server, which stays meaningful when other processes load the machine;
 *  - POST /auth/pos/login latency p50/p99 with the default argon2id parameters (OWASP minimum);
 *  - the cost of the first request with a new access token (an Ed25519 verification, which the
 *    server then caches until the token expires), measured in-process over distinct tokens.
 * The servers run in a child process so the load generator does not steal their CPU; phases
 * alternate (bare, me, bare, me, ...) so background load on a shared machine hits both alike.
 * Bounded: 2 × ROUNDS phases of PHASE_SECONDS and LOGINS sequential logins (about 25 s).
 */
import { startServeChild } from './serve-child.js';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { IdentityIndex } from '../src/signin/identity-index.js';
import { DEFAULT_ARGON2_PARAMS, hashPassword } from '../src/signin/passwords.js';
import { buildSignInApp } from '../src/signin/server.js';
import { MemorySessionStore } from '../src/signin/sessions.js';
import { MemorySigningKeyStore } from '../src/signin/signing-key.js';
import { realClock } from '../src/base/clock.js';
import { TokenService } from '../src/signin/tokens.js';
import { recordResults } from './results.js';

const PHASE_SECONDS = Number(process.env['BENCH_PHASE_SECONDS'] ?? 3);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 16);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const LOGINS = Number(process.env['BENCH_LOGINS'] ?? 40);
const PASSWORD = 'bench password';

interface ServeInfo {
  bare: number;
  signin: number;
}

/** Child mode: a bare fastify JSON route and the sign-in API, both on loopback. */
async function serve(): Promise<void> {
  const bare = Fastify({ logger: false });
  // The same body /auth/pos/me returns, so the difference is the sign-in work, not the payload size.
  const profile = {
    shopUser: {
      id: 'bench',
      email: 'bench@example.com',
      displayName: 'Bench',
      role: 'cashier',
      shop: { id: 'shop-1', name: 'Shop 1', code: 'S-1' },
      employeeCode: null,
    },
    availableShops: [{ id: 'shop-1', name: 'Shop 1', code: 'S-1' }],
  };
  bare.get('/bare', async () => profile);
  await bare.listen({ host: '127.0.0.1', port: 0 });

  const index = new IdentityIndex();
  index.upsertSecret({
    metadata: { name: 'pw' },
    data: { password: Buffer.from(await hashPassword(PASSWORD, DEFAULT_ARGON2_PARAMS)).toString('base64') },
  });
  for (let i = 1; i <= 3; i++)
    index.upsertShop({ metadata: { name: `shop-${i}` }, spec: { displayName: `Shop ${i}`, code: `S-${i}` } });
  index.upsertShopUser({
    metadata: { name: 'bench' },
    spec: {
      email: 'bench@example.com',
      displayName: 'Bench',
      passwordSecretRef: { name: 'pw', key: 'password' },
      memberships: [{ shop: 'shop-1', role: 'cashier' }],
    },
  });
  const { app } = await buildSignInApp({
    directory: index,
    sessions: new MemorySessionStore(),
    signingKeys: new MemorySigningKeyStore(),
    logger: false,
    accountFailuresPerHour: 1_000_000,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (s: typeof bare): number => {
    const a = s.server.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  };
  const info: ServeInfo = { bare: port(bare), signin: port(app as unknown as typeof bare) };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  // The parent asks for the CPU time this process used (`cpu` line), to cost each request in CPU
  // microseconds: unlike requests per second, that barely moves when other processes load the machine.
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    for (const line of d.split('\n'))
      if (line.trim() === 'cpu') {
        const u = process.cpuUsage();
        process.stdout.write(`${JSON.stringify({ cpuMicros: u.user + u.system })}\n`);
      }
  });
  process.stdin.on('end', () => process.exit(0));
}

function request(
  agent: http.Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          ...headers,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Closed-loop load: CONNECTIONS requests in flight for `seconds`; returns completed requests per second and their count. */
async function load(
  port: number,
  path: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<{ perSecond: number; count: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const r = await request(agent, port, 'GET', path, headers);
        if (r.status === 200) done++;
        else failed++;
      }
    }),
  );
  agent.destroy();
  if (failed > 0) throw new Error(`${failed} requests to ${path} failed`);
  return { perSecond: done / ((performance.now() - start) / 1000), count: done };
}

/** Microseconds to verify an access token never seen before (no cache hit), over `n` distinct tokens. */
async function coldVerifyMicros(n: number): Promise<number> {
  const tokens = new TokenService(await new MemorySigningKeyStore().load(), realClock);
  const minted = await Promise.all(
    Array.from({ length: n }, (_, i) => tokens.issueAccessToken({ kind: 'ShopUser', name: `u${i}` }, `s-${i}`, 'pos')),
  );
  const t0 = performance.now();
  for (const t of minted)
    if (!(await tokens.verifyAccessToken(t, 'pos'))) throw new Error('a fresh token failed verification');
  return ((performance.now() - t0) * 1000) / n;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function main(): Promise<void> {
  const server = startServeChild(fileURLToPath(import.meta.url));
  const { child } = server;
  try {
    const info = JSON.parse(await server.nextLine()) as ServeInfo;
    const serverCpu = (): Promise<number> => server.cpuMicros();
    /** Requests per second, and server CPU microseconds per request, of one phase. */
    const phase = async (
      port: number,
      path: string,
      headers: Record<string, string>,
    ): Promise<{ perSecond: number; cpuPerRequest: number }> => {
      const before = await serverCpu();
      const r = await load(port, path, headers, PHASE_SECONDS);
      return { perSecond: r.perSecond, cpuPerRequest: ((await serverCpu()) - before) / r.count };
    };
    const agent = new http.Agent({ keepAlive: true });
    const loginBody = JSON.stringify({ email: 'bench@example.com', password: PASSWORD });
    const latencies: number[] = [];
    let accessToken = '';
    for (let i = 0; i < LOGINS + 3; i++) {
      const t0 = performance.now();
      const r = await request(agent, info.signin, 'POST', '/auth/pos/login', {}, loginBody);
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.body}`);
      accessToken = (JSON.parse(r.body) as { accessToken: string }).accessToken;
      if (i >= 3) latencies.push(ms); // the first logins warm the JIT
    }
    agent.destroy();
    latencies.sort((x, y) => x - y);

    const meHeaders = { authorization: `Bearer ${accessToken}`, 'x-shop-id': 'shop-1' };
    await load(info.bare, '/bare', {}, 1);
    await load(info.signin, '/auth/pos/me', meHeaders, 1);
    const bareRuns: { perSecond: number; cpuPerRequest: number }[] = [];
    const meRuns: { perSecond: number; cpuPerRequest: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bareRuns.push(await phase(info.bare, '/bare', {}));
      meRuns.push(await phase(info.signin, '/auth/pos/me', meHeaders));
    }
    const bare = bareRuns.map((r) => r.perSecond);
    const me = meRuns.map((r) => r.perSecond);
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    const ratio = mean(me) / mean(bare);
    // Each round measures both back to back, so a per-round ratio is less exposed to load that changes between rounds.
    const perRound = me.map((m, i) => m / (bare[i] ?? NaN)).sort((x, y) => x - y);
    const medianRatio = median(perRound);
    const bareCpu = median(bareRuns.map((r) => r.cpuPerRequest));
    const meCpu = median(meRuns.map((r) => r.cpuPerRequest));
    const cpuRatio = bareCpu / meCpu;
    const p = DEFAULT_ARGON2_PARAMS;
    console.log(`argon2id m=${p.memoryCost} KiB t=${p.timeCost} p=${p.parallelism}`);
    console.log(
      `POST /auth/pos/login latency over ${latencies.length} logins: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
    );
    console.log(
      `bare fastify JSON route: ${mean(bare).toFixed(0)} req/s (${bare.map((x) => x.toFixed(0)).join(', ')})`,
    );
    console.log(`GET /auth/pos/me:        ${mean(me).toFixed(0)} req/s (${me.map((x) => x.toFixed(0)).join(', ')})`);
    const coldVerify = await coldVerifyMicros(500);
    console.log(`first use of a new access token (Ed25519 verify, then cached): ${coldVerify.toFixed(0)} µs`);
    console.log(`server CPU per request (median): bare ${bareCpu.toFixed(0)} µs, /auth/pos/me ${meCpu.toFixed(0)} µs`);
    console.log(
      `throughput ratio /auth/pos/me ÷ bare: ${ratio.toFixed(2)} over all rounds, median per round ${medianRatio.toFixed(2)} (${perRound.map((r) => r.toFixed(2)).join(', ')})`,
    );
    console.log(
      `CPU-cost ratio (bare µs ÷ me µs, the throughput ratio of a CPU-bound server, robust to machine load): ${cpuRatio.toFixed(2)}`,
    );
    console.log(
      `goal ≥ 0.70: throughput median ${medianRatio >= 0.7 ? 'MET' : 'NOT MET'}, CPU-cost ${cpuRatio >= 0.7 ? 'MET' : 'NOT MET'}`,
    );
    const two = (x: number): number => Number(x.toFixed(2));
    recordResults([
      {
        id: 'B5.signin.me_ratio',
        name: 'GET /auth/pos/me requests/s ÷ bare fastify route requests/s (median per round)',
        value: two(medianRatio),
        unit: 'ratio',
        goal: { op: '>=', value: 0.7 },
        baseline: { value: Math.round(mean(bare)), name: 'bare fastify JSON route, requests/s' },
        ratio: two(medianRatio),
        notes: `per round ${perRound.map((r) => r.toFixed(2)).join(', ')}; over all rounds ${ratio.toFixed(2)}`,
      },
      {
        id: 'B5.signin.me_cpu_ratio',
        name: 'server CPU per request, bare route ÷ /auth/pos/me (throughput ratio of a CPU-bound server)',
        value: two(cpuRatio),
        unit: 'ratio',
        goal: { op: '>=', value: 0.7 },
        baseline: { value: Math.round(bareCpu), name: 'bare route, server CPU µs per request' },
        ratio: two(cpuRatio),
        notes: `/auth/pos/me ${meCpu.toFixed(0)} µs per request`,
      },
      {
        id: 'B5.signin.me_rps',
        name: 'GET /auth/pos/me requests per second',
        value: Math.round(mean(me)),
        unit: '/s',
        baseline: { value: Math.round(mean(bare)), name: 'bare fastify JSON route' },
        ratio: two(ratio),
      },
      {
        id: 'B5.signin.login_p50',
        name: 'POST /auth/pos/login latency, median',
        value: Number(percentile(latencies, 50).toFixed(1)),
        unit: 'ms',
        notes: `argon2id m=${p.memoryCost} KiB t=${p.timeCost} p=${p.parallelism}, ${latencies.length} logins`,
      },
      {
        id: 'B5.signin.login_p99',
        name: 'POST /auth/pos/login latency, 99th percentile',
        value: Number(percentile(latencies, 99).toFixed(1)),
        unit: 'ms',
        notes: `${latencies.length} logins`,
      },
      {
        id: 'B5.signin.cold_verify',
        name: 'first use of a new access token (Ed25519 verification, then cached)',
        value: Math.round(coldVerify),
        unit: 'µs',
      },
    ]);
  } finally {
    child.stdin.end();
    child.kill();
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();
