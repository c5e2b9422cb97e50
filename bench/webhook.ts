/**
 * Admission webhook latency over HTTPS on loopback, the way kube-apiserver calls it: keep-alive
 * connections, realistic AdmissionReviews (CREATE of a valid PredictionEndpoint, UPDATE of a
 * RegistryEndpoint with its old object, a CREATE that is denied), sent open-loop at a fixed rate so
 * a slow response does not lower the offered load. Bounded in count and time. The server runs in
 * a child process, as it would against a real API server, so the client's work does not share its
 * event loop.
 *
 *   npx tsx bench/webhook.ts [--rate 200] [--requests 3000] [--max-seconds 30]
 *
 * EO_BENCH_CPU_PROF=1 writes a V8 CPU profile of the server process to /tmp/eo-webhook-prof/.
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:https';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { defaultValidationOptions } from '../src/api/common/kind.js';
import { issueCertificates, servingIdentity } from '../src/webhook/certificates.js';
import { startWebhookServer } from '../src/webhook/server.js';
import { recordResults } from './results.js';
import { reviewBodies } from './webhook-reviews.js';
import { openLoop } from './gateway-fixture.js';
import { OPERATOR_NODE_FLAGS } from '../src/deploy/workload.js';

const { values } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    rate: { type: 'string', default: '200' },
    requests: { type: 'string', default: '3000' },
    'max-seconds': { type: 'string', default: '30' },
  },
});
const rate = Number(values.rate);
const total = Number(values.requests);
const maxMs = Number(values['max-seconds']) * 1000;
const WARMUP = 200;

/** Child mode: start the server with fresh certificates, report port and CA to the parent, serve until told to stop. */
async function serve(): Promise<void> {
  const identity = servingIdentity('endpoint-operator-webhook', 'endpoint-operator-system', { host: '127.0.0.1' });
  const certs = await issueCertificates({ action: 'renew-all', reason: 'bench' }, undefined, identity, new Date(), {
    caDays: 1,
    servingDays: 1,
  });
  // Logging stays on (one line per request, as in production), written to /dev/null.
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    tls: certs,
    options: defaultValidationOptions,
    log: pino(pino.destination('/dev/null')),
  });
  process.send?.({ port: server.port, ca: certs.caBundle });
  // CPU time spent serving: a figure that machine load from other processes does not inflate.
  process.on('message', (m) => {
    if (m === 'cpu') process.send?.({ cpuMicros: process.cpuUsage().user + process.cpuUsage().system });
    else void server.close().then(() => process.exit(0));
  });
}

async function main(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['--serve'], {
    // The node flags the chart gives the operator's container, which serves the webhook.
    execArgv: [
      ...OPERATOR_NODE_FLAGS,
      '--import',
      'tsx',
      ...(process.env['EO_BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=/tmp/eo-webhook-prof'] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port, ca } = await new Promise<{ port: number; ca: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; ca: string }));
    child.once('exit', (code) => reject(new Error(`webhook server process exited with ${code}`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 16, ca });
  const decisions = new Map<string, number>();
  // Built up front: the client's own JSON work must not show up as server latency.
  const prebuilt = Array.from({ length: WARMUP + total }, (_, i) =>
    reviewBodies[i % reviewBodies.length]!(`bench-${i}`),
  );

  const send = (i: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = prebuilt[i]!;
      const started = process.hrtime.bigint();
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/validate?timeout=5s',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            const allowed = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { response?: { allowed?: boolean } })
              .response?.allowed;
            const key = res.statusCode === 200 ? (allowed ? 'allowed' : 'denied') : `http ${res.statusCode}`;
            decisions.set(key, (decisions.get(key) ?? 0) + 1);
            resolve(ms);
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  const run = (from: number, count: number): Promise<number[]> => openLoop((i) => send(from + i), count, rate, maxMs);

  const serverCpu = (): Promise<number> =>
    new Promise((resolve) => {
      child.once('message', (m) => resolve((m as { cpuMicros: number }).cpuMicros));
      child.send('cpu');
    });

  try {
    await run(0, WARMUP);
    decisions.clear();
    const cpuBefore = await serverCpu();
    const t0 = performance.now();
    const latencies = (await run(WARMUP, total)).sort((a, b) => a - b);
    const seconds = (performance.now() - t0) / 1000;
    const cpuPerRequest = (await serverCpu()) - cpuBefore;
    const pct = (p: number): string =>
      (latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN).toFixed(2);
    console.log(
      `webhook admission over HTTPS keep-alive, loopback: ${latencies.length} requests at ${rate}/s offered (${(latencies.length / seconds).toFixed(0)}/s achieved) in ${seconds.toFixed(1)} s`,
    );
    console.log(`latency ms: p50 ${pct(50)}  p90 ${pct(90)}  p99 ${pct(99)}  max ${latencies.at(-1)?.toFixed(2)}`);
    console.log(
      `server CPU per request: ${(cpuPerRequest / latencies.length / 1000).toFixed(3)} ms (user+system, TLS and logging included); load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${cpus().length} cores`,
    );
    console.log(`decisions: ${[...decisions].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    const at = (p: number): number => Number(pct(p));
    const conditions = `${latencies.length} requests at ${rate}/s offered over HTTPS keep-alive on loopback`;
    recordResults(
      [
        {
          id: 'B4.webhook.p50',
          name: 'admission webhook latency, median',
          value: at(50),
          unit: 'ms',
          notes: conditions,
        },
        {
          id: 'B4.webhook.p99',
          name: 'admission webhook latency, 99th percentile',
          value: at(99),
          unit: 'ms',
          notes: conditions,
        },
        {
          id: 'B4.webhook.achieved_rate',
          name: 'admission requests per second achieved (offered open-loop)',
          value: Number((latencies.length / seconds).toFixed(1)),
          unit: '/s',
          baseline: { value: rate, name: 'offered rate' },
          ratio: Number((latencies.length / seconds / rate).toFixed(3)),
        },
        {
          id: 'B4.webhook.cpu_per_request',
          name: 'webhook server CPU per request (user+system, TLS and logging included)',
          value: Number((cpuPerRequest / latencies.length / 1000).toFixed(3)),
          unit: 'ms',
        },
      ],
      { webhookDecisions: Object.fromEntries(decisions) },
    );
  } finally {
    agent.destroy();
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
  }
}

if (values.serve) await serve();
else await main();
