/**
 * `npm run bench -- resolve` (B7): Service Directory's ResolveService served from the lookup cache.
 *  - 10,000 RegistryEndpoints over 100 RegistryServices in the informer caches (real Informers over an
 *    in-memory list: the API server is not what is measured here);
 *  - POST {service}:resolve over loopback HTTP at a fixed offered rate (open loop: latency counts from
 *    the scheduled send time, so a stall is not hidden by the generator waiting for it), without a
 *    filter and with two filters: p50 and p99, and the server's CPU microseconds per request, whose
 *    inverse is the resolves per second one core sustains (goals: p99 ≤ 1 ms, ≥ 10,000/s on one core);
 *  - the EndpointSlice write after an endpoint change (bench/resolve-dns.ts, which starts a control plane).
 * The server runs in a child process so the load generator does not steal its CPU. Bounded: three
 * phases of PHASE_SECONDS at RATE requests per second.
 */
import { startServeChild } from './serve-child.js';
import http from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { RegistryLookupCache } from '../src/gateway/registry/cache.js';
import { resolveServiceText } from '../src/gateway/registry/lookup.js';
import { registryLookupRoutes } from '../src/gateway/registry/routes.js';
import type { KubeObject } from '../src/api/common/kube-object.js';
import { staticInformer } from '../test/support/static-informer.js';
import { dnsPhase } from './resolve/dns-phase.js';
import { recordResults } from './results.js';

const RATE = Number(process.env['BENCH_RATE'] ?? 1000);
const PHASE_SECONDS = Number(process.env['BENCH_PHASE_SECONDS'] ?? 5);
const DNS_ENDPOINTS = Number(process.env['BENCH_DNS_ENDPOINTS'] ?? 200);
const DNS_CHANGES = Number(process.env['BENCH_DNS_CHANGES'] ?? 20);
const SERVICES = 100;
const PER_SERVICE = 100;
const ZONES = ['us-east1-a', 'us-east1-b', 'us-east1-c', 'us-east1-d'];
const TIERS = ['gold', 'silver', 'bronze'];

const serviceName = (i: number): string =>
  `projects/bench-project/locations/us-east1/namespaces/shop/services/svc-${i}`;

function registry(): { services: KubeObject[]; endpoints: KubeObject[] } {
  const services: KubeObject[] = [];
  const endpoints: KubeObject[] = [];
  for (let s = 0; s < SERVICES; s++) {
    const meta = (name: string): KubeObject['metadata'] => ({
      name,
      namespace: 'shop',
      uid: `00000000-0000-4000-8000-${String(endpoints.length + services.length).padStart(12, '0')}`,
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: '2026-01-01T00:00:00Z',
    });
    services.push({
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryService',
      metadata: meta(`svc-${s}`),
      spec: { name: serviceName(s), annotations: { team: 'bench' } },
    });
    for (let e = 0; e < PER_SERVICE; e++) {
      endpoints.push({
        apiVersion: 'registry.endpoint-operator.dev/v1',
        kind: 'RegistryEndpoint',
        metadata: meta(`svc-${s}-ep-${e}`),
        spec: {
          name: `${serviceName(s)}/endpoints/ep-${String(e).padStart(3, '0')}`,
          address: `10.${s}.${Math.floor(e / 250)}.${(e % 250) + 1}`,
          port: 8000 + (e % 10),
          annotations: {
            zone: ZONES[e % ZONES.length] ?? '',
            tier: TIERS[e % TIERS.length] ?? '',
            protocol: e % 2 === 0 ? 'grpc' : 'http',
          },
        },
      });
    }
  }
  return { services, endpoints };
}

/** The lookup itself, without HTTP: resolveServiceText over the cache, each call timed (µs). */
function inProcess(cache: RegistryLookupCache, filter: string | undefined, calls: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    resolveServiceText(cache, serviceName(i % SERVICES), filter === undefined ? {} : { endpointFilter: filter });
    times.push((performance.now() - t0) * 1000);
  }
  return times.sort((a, b) => a - b);
}

/** Child mode: the lookup routes over 10,000 cached endpoints, on loopback. */
async function serve(): Promise<void> {
  const { services, endpoints } = registry();
  const svc = staticInformer('registryservices', services);
  const eps = staticInformer('registryendpoints', endpoints);
  const cache = new RegistryLookupCache([svc.informer], [eps.informer], {
    reservedPrefixes: ['endpoint-operator.dev'],
  });
  await Promise.all([svc.start(), eps.start()]);
  const app = Fastify({ logger: false });
  await registryLookupRoutes(app, { source: cache });
  // Baseline: the same HTTP exchange (a JSON POST, an answer of the same size) with no lookup behind it.
  const sameSize = resolveServiceText(cache, serviceName(0), {});
  app.post('/bare', async (_req, reply) =>
    reply.header('content-type', 'application/json; charset=UTF-8').send(sameSize),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0, endpoints: eps.informer.list().length })}\n`,
  );
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    for (const line of d.split('\n')) {
      if (line.trim() === 'cpu') {
        const u = process.cpuUsage();
        process.stdout.write(`${JSON.stringify({ cpuMicros: u.user + u.system })}\n`);
      } else if (line.startsWith('inprocess ')) {
        const filter = line.slice('inprocess '.length);
        inProcess(cache, filter === '' ? undefined : filter, 20_000); // warm-up
        const t = inProcess(cache, filter === '' ? undefined : filter, 100_000);
        process.stdout.write(`${JSON.stringify({ p50: percentile(t, 50), p99: percentile(t, 99) })}\n`);
      }
    }
  });
  process.stdin.on('end', () => process.exit(0));
}

function post(agent: http.Agent, port: number, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
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

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Open loop: request i is due at start + i/RATE; its latency counts from then. Services are visited round robin. */
async function offeredLoad(
  port: number,
  filter: string | undefined | null,
  seconds: number,
): Promise<{ latencies: number[]; returned: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const total = Math.round(RATE * seconds);
  const latencies: number[] = [];
  let returned = 0;
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    // Never before its time (that would flatter the latency); timers are coarse, so the last millisecond is yielded away.
    for (let wait = due - performance.now(); wait > 0; wait = due - performance.now()) {
      await new Promise((r) => (wait > 1.5 ? setTimeout(r, wait - 1) : setImmediate(r)));
    }
    const body = JSON.stringify(filter === undefined || filter === null ? {} : { endpointFilter: filter });
    inFlight.push(
      post(agent, port, filter === null ? '/bare' : `/v1/${serviceName(i % SERVICES)}:resolve`, body).then((r) => {
        latencies.push(performance.now() - due);
        if (r.status !== 200) throw new Error(`resolve answered ${r.status}: ${r.body}`);
        returned += ((JSON.parse(r.body) as { service: { endpoints?: unknown[] } }).service.endpoints ?? []).length;
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { latencies, returned: returned / total };
}

async function main(): Promise<void> {
  const server = startServeChild(fileURLToPath(import.meta.url));
  const { child } = server;
  try {
    const info = JSON.parse(await server.nextLine()) as { port: number; endpoints: number };
    const serverCpu = (): Promise<number> => server.cpuMicros();
    console.log(
      `${info.endpoints} endpoints over ${SERVICES} services cached; offered ${RATE} resolves/s for ${PHASE_SECONDS} s per phase`,
    );
    await offeredLoad(info.port, undefined, 1); // JIT warm-up, also fills the materialised views

    // filter null: the bare baseline route.
    const phases: { id: string; what: string; filter: string | undefined | null }[] = [
      { id: 'bare', what: 'baseline: bare fastify POST route answering the same bytes, no lookup', filter: null },
      { id: 'nofilter', what: 'no filter (maxEndpoints default 25)', filter: undefined },
      {
        id: 'filter',
        what: 'filter annotations.zone=us-east1-b AND port>=8005',
        filter: 'annotations.zone=us-east1-b AND port>=8005',
      },
      {
        id: 'filter_complex',
        what: 'filter (annotations.tier=gold OR annotations.tier=silver) AND NOT address="10.7.0.9" AND annotations:protocol',
        filter:
          '(annotations.tier=gold OR annotations.tier=silver) AND NOT address="10.7.0.9" AND annotations:protocol',
      },
    ];
    const entries = [];
    const details: Record<string, unknown> = {
      rate: RATE,
      phaseSeconds: PHASE_SECONDS,
      endpoints: info.endpoints,
      services: SERVICES,
      loadavg: loadavg(),
    };
    for (const phase of phases) {
      const before = await serverCpu();
      const r = await offeredLoad(info.port, phase.filter, PHASE_SECONDS);
      const cpuPerRequest = ((await serverCpu()) - before) / r.latencies.length;
      const p50 = percentile(r.latencies, 50);
      const p99 = percentile(r.latencies, 99);
      const perCore = 1e6 / cpuPerRequest;
      console.log(
        `${phase.what}: p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms, server CPU ${cpuPerRequest.toFixed(0)} µs/request = ${perCore.toFixed(0)} resolves/s per core, ${r.returned.toFixed(1)} endpoints per answer`,
      );
      let pure = { p50: NaN, p99: NaN };
      if (phase.filter !== null) {
        child.stdin.write(`inprocess ${phase.filter ?? ''}\n`);
        pure = JSON.parse(await server.nextLine()) as { p50: number; p99: number };
        console.log(`  in-process resolve (no HTTP): p50 ${pure.p50.toFixed(1)} µs, p99 ${pure.p99.toFixed(1)} µs`);
      }
      const notes = `${r.latencies.length} requests at ${RATE}/s offered, ${r.returned.toFixed(1)} endpoints per answer, HTTP over loopback`;
      entries.push(
        {
          id: `B7.resolve.${phase.id}.p50`,
          name: `resolve latency p50, ${phase.what}`,
          value: Number(p50.toFixed(3)),
          unit: 'ms',
          notes,
        },
        {
          id: `B7.resolve.${phase.id}.p99`,
          name: `resolve latency p99, ${phase.what}`,
          value: Number(p99.toFixed(3)),
          unit: 'ms',
          ...(phase.filter === null ? {} : { goal: { op: '<=' as const, value: 1 } }),
          notes,
        },
        {
          id: `B7.resolve.${phase.id}.cpu_us`,
          name: `server CPU per resolve, ${phase.what}`,
          value: Math.round(cpuPerRequest),
          unit: 'µs',
        },
        ...(phase.filter === null
          ? []
          : [
              {
                id: `B7.resolve.${phase.id}.inprocess_p99_us`,
                name: `in-process resolve (cache, filter, serialisation; no HTTP) p99, ${phase.what}`,
                value: Number(pure.p99.toFixed(1)),
                unit: 'µs',
                notes: `p50 ${pure.p50.toFixed(1)} µs over 100,000 calls`,
              },
            ]),
        {
          id: `B7.resolve.${phase.id}.per_core`,
          name: `resolves per second on one core (1 / CPU per request), ${phase.what}`,
          value: Math.round(perCore),
          unit: '/s',
          ...(phase.filter === null ? {} : { goal: { op: '>=' as const, value: 10_000 } }),
        },
      );
    }
    recordResults(entries, details);
  } finally {
    child.stdin.end();
    child.kill();
  }

  if (process.env['BENCH_DNS'] === '0') return;
  const dns = await dnsPhase(DNS_ENDPOINTS, DNS_CHANGES);
  const sorted = [...dns.latenciesMs].sort((a, b) => a - b);
  const maxWrites = Math.max(...dns.writesPerChange);
  const minWrites = Math.min(...dns.writesPerChange);
  console.log(
    `EndpointSlice after an endpoint change (${dns.endpoints} endpoints, ${sorted.length} changes): p50 ${percentile(sorted, 50).toFixed(0)} ms, max ${(sorted[sorted.length - 1] ?? NaN).toFixed(0)} ms; slice writes per change ${minWrites}..${maxWrites}`,
  );
  recordResults(
    [
      {
        id: 'B7.dns.slice_latency_p50',
        name: 'endpoint change accepted → new address seen in its EndpointSlice, median',
        value: Math.round(percentile(sorted, 50)),
        unit: 'ms',
        notes: `${dns.endpoints} endpoints, ${sorted.length} changes`,
      },
      {
        id: 'B7.dns.slice_latency_max',
        name: 'endpoint change accepted → new address seen in its EndpointSlice, slowest',
        value: Math.round(sorted[sorted.length - 1] ?? NaN),
        unit: 'ms',
        goal: { op: '<=', value: 1000 },
      },
      {
        id: 'B7.dns.writes_per_change',
        name: 'EndpointSlice writes per endpoint change, most seen',
        value: maxWrites,
        unit: 'writes',
        goal: { op: '==', value: 1 },
        notes: `per change: ${dns.writesPerChange.join(', ')}`,
      },
    ],
    { dnsLatenciesMs: dns.latenciesMs.map((x) => Math.round(x)) },
  );
}

if (process.argv.includes('--serve')) await serve();
else await main();
