/**
 * B6-grpc (issue 42, "Measured"): what a gRPC `PredictionService/Predict` call costs the gateway against a
 * REST `:predict` call on the same TLS port, and what TLS costs a REST call against plain HTTP, in one run.
 *
 * Arms, each a compiled gateway in its own process (the same binary and flags, `--auth=none`, reading the
 * same endpoint from a real kube-apiserver, calling the same model server process), so that each arm's CPU
 * is its process's own:
 *   rest (the reference): TLS, REST over one keep-alive HTTP/1.1 connection pool (node:https);
 *   restB: a second TLS gateway called the same way: the A/A floor (what two processes differ by);
 *   grpc: TLS, gRPC over ONE keep-alive HTTP/2 connection (node:http2, a PredictRequest encoded once from the
 *     gateway's own descriptors, the standard gRPC framing; answers checked for HTTP 200 and grpc-status 0);
 *   plain: `--plain-http`, REST over keep-alive HTTP/1.1 (node:http);
 *   resth2: TLS, REST :predict over one keep-alive HTTP/2 connection, as gRPC's: splits what HTTP/2 costs
 *     from what the gRPC codec and handler cost (gRPC ÷ resth2);
 *   forwarder: a do-nothing node:https + undici forwarder (bare-forwarder.ts, own process) in front of the same
 *     model server, called as `rest` is: the floor of a Node proxy over TLS (REST ÷ forwarder);
 *   fastifyForwarder: the same forwarder served from a fastify route (hijacked reply, body left unread), as the
 *     gateway's REST predictions would be if they went through its fastify instance: its CPU over the forwarder's
 *     is what the gateway's raw prediction path (ahead of fastify, src/gateway/server.ts) saves a call.
 * CPU per call: paired blocks against `rest` (paired-arms.ts: per-thread CPU from schedstat in ns, over blocks
 * shared with the reference's calls, open loop), in rounds of fresh processes (bootstrap.ts for the interval).
 * Latency: every arm's calls and direct calls to the model server interleaved call by call, one in flight
 * (paired-latency.ts); each arm's added p50 is its p50 minus the direct calls'. The client's own CPU is not
 * measured, but its wall time is in every call's: node:http2's client takes longer per call than node:https's
 * (resth2's added p50 against rest's shows by how much), so gRPC ÷ resth2 is also printed, without it.
 * Ratios (issue 49's goals): gRPC ÷ REST on HTTP/2 (CPU per call and added p50, ≤ 1.2), gRPC ÷ REST on
 * HTTP/1.1 (CPU, ≤ 1.3), REST ÷ the forwarder, both TLS (CPU, ≤ 1.3); TLS ÷ plain for REST (no goal).
 *
 *   npx tsx bench/grpc.ts [--rate 1000] [--requests 6000] [--blocks 6] [--rounds 2] [--warmup 3000] [--latency-cycles 2000] [--latency-blocks 10] [--max-seconds 120 × rounds]
 *   BENCH_GRPC_ROUNDS=5 npm run bench -- grpc   (recorded, longer)
 *
 * Needs dist/ (`npm run build`; `npm run bench` builds). Bounded in count and time; loopback only.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { messageFromJson, messageType } from '../src/gateway/grpc/services.js';
import { testGatewayTls, writeGatewayTlsFiles } from '../test/support/gateway-tls.js';
import { meanInterval } from './bootstrap.js';
import {
  openLoop,
  startGatewayBinary,
  startHelperProcess,
  stopChildren,
  withGatewayBenchWorld,
} from './gateway-fixture.js';
import { startModelProcess } from './model-process.js';
import {
  comparePaired,
  mergeRounds,
  ok,
  pairDifference,
  type Arm,
  type PairFigures,
  type Sent,
} from './paired-arms.js';
import { addedP50, interleavedLatencies, mergeLatencyRounds, type BlockLatencies } from './paired-latency.js';
import { recordResults } from './results.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '6000' },
    blocks: { type: 'string', default: '6' },
    // Through `npm run bench`, BENCH_GRPC_ROUNDS runs longer (each round ~40 s of fresh processes).
    rounds: { type: 'string', default: process.env['BENCH_GRPC_ROUNDS'] ?? '2' },
    warmup: { type: 'string', default: '3000' },
    'latency-cycles': { type: 'string', default: '2000' },
    'latency-blocks': { type: 'string', default: '10' },
    'max-seconds': { type: 'string', default: String(120 * Number(process.env['BENCH_GRPC_ROUNDS'] ?? 2)) },
  },
});
const NS = 'bench-grpc';
const MODEL = 'fraud';
const RESOURCE_NAME = `projects/${NS}/locations/local/endpoints/fraud`;
const INSTANCES = [{ amount: 240, hourOfDay: 23, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 5 }];
const BODY = JSON.stringify({ instances: INSTANCES });
/** The arms' names: rest is the reference; restB its A/A twin. */
const ARMS = ['rest', 'restB', 'grpc', 'plain', 'resth2', 'forwarder', 'fastifyForwarder'] as const;
const PREDICT_PATH = '/google.cloud.aiplatform.v1.PredictionService/Predict';
const PredictRequest = messageType('google.cloud.aiplatform.v1.PredictRequest');
const PredictResponse = messageType('google.cloud.aiplatform.v1.PredictResponse');

/** The PredictRequest as one gRPC length-prefixed message (flag 0: not compressed), encoded once. */
function grpcFrame(): Buffer {
  const message = toBinary(
    PredictRequest,
    messageFromJson(PredictRequest, { endpoint: RESOURCE_NAME, instances: INSTANCES }) as never,
  );
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}
const FRAME = grpcFrame();

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 128 });

/** One REST call; `onBody` sees the answer's bytes (for the warm-up's check). */
function sendRest(
  target: { host: string; port: number; path: string; agent: HttpAgent | HttpsAgent; tls: boolean },
  onBody?: (body: Buffer) => void,
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const options = {
      host: target.host,
      port: target.port,
      method: 'POST',
      path: target.path,
      agent: target.agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) },
    };
    const answered = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      if (onBody === undefined) res.resume();
      else res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        onBody?.(Buffer.concat(chunks));
        resolve([Number(process.hrtime.bigint() - started) / 1e6, res.statusCode ?? 0]);
      });
    };
    const req = target.tls ? httpsRequest(options, answered) : httpRequest(options, answered);
    req.on('error', reject);
    req.end(BODY);
  });
}

/**
 * One call on an HTTP/2 session: gRPC Predict (the pre-encoded frame), or REST :predict (the JSON body) on
 * the same kind of connection. [ms, 200] when HTTP 200 and, for gRPC, grpc-status 0 (in the trailers, or in
 * the headers of a trailers-only answer); else [ms, status] or [ms, 1000 + grpc-status], which ok() names.
 * `onBody` sees the answer's bytes (gRPC: the message without its 5-byte prefix).
 */
function sendH2(
  session: ClientHttp2Session,
  kind: 'grpc' | 'rest',
  restPath: string,
  onBody?: (body: Buffer) => void,
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const stream = session.request(
      kind === 'grpc'
        ? {
            [constants.HTTP2_HEADER_METHOD]: 'POST',
            [constants.HTTP2_HEADER_PATH]: PREDICT_PATH,
            'content-type': 'application/grpc',
            te: 'trailers',
          }
        : {
            [constants.HTTP2_HEADER_METHOD]: 'POST',
            [constants.HTTP2_HEADER_PATH]: restPath,
            'content-type': 'application/json',
            // Without it the gateway weighs the body at the 1.5 MB limit against the caller's byte budget (fairness.ts).
            'content-length': Buffer.byteLength(BODY),
          },
    );
    let status = 0;
    let grpcStatus: string | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => {
      status = Number(headers[constants.HTTP2_HEADER_STATUS]);
      grpcStatus = headers['grpc-status'] as string | undefined;
    });
    stream.on('trailers', (trailers) => (grpcStatus = trailers['grpc-status'] as string | undefined));
    stream.on('data', (c: Buffer) => {
      if (onBody !== undefined) chunks.push(c);
    });
    stream.on('end', () => {
      if (onBody !== undefined) onBody(Buffer.concat(chunks).subarray(kind === 'grpc' ? 5 : 0));
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (kind === 'rest') return resolve([ms, status]);
      resolve([ms, status === 200 && grpcStatus === '0' ? 200 : 1000 + Number(grpcStatus ?? 99)]);
    });
    stream.on('error', reject);
    stream.end(kind === 'grpc' ? FRAME : BODY);
  });
}

/** Throws unless the answer carries one prediction (the arms are compared on calls that did the work). */
function expectPrediction(arm: string, predictions: unknown): void {
  if (!Array.isArray(predictions) || predictions.length !== 1)
    throw new Error(`${arm}: expected one prediction, got ${JSON.stringify(predictions)}`);
}

async function driver(): Promise<void> {
  const rate = Number(values.rate);
  const maxMs = Number(values['max-seconds']) * 1000;
  const rounds = Number(values.rounds);
  const blocks = Number(values.blocks);
  const latencyBlocks = Number(values['latency-blocks']);
  if (rounds < 1) throw new Error('--rounds must be at least 1');
  const tls = await testGatewayTls();
  const tlsFiles = await writeGatewayTlsFiles(tls);
  const { certFile, keyFile } = tlsFiles;
  const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 128, ca: tls.ca });
  const sessions: ClientHttp2Session[] = [];
  try {
    await withGatewayBenchWorld(
      'B6-grpc',
      { namespace: NS, model: MODEL, resourceName: RESOURCE_NAME },
      maxMs,
      (host) => startModelProcess(host, MODEL),
      async ({ plane, client, model, children }) => {
        client.close();
        const common = ['--health-port=-1', '--max-calls-per-caller=4096', '--auth=none'];
        const restPath = `/v1/${RESOURCE_NAME}:predict`;
        const direct: Arm = {
          name: 'direct',
          pid: model.child.pid ?? 0,
          call: () =>
            sendRest({
              host: plane.modelHost.address,
              port: model.port,
              path: `/v1/models/${MODEL}:predict`,
              agent: httpAgent,
              tls: false,
            }),
        };
        /** A fresh gateway process, its arm, and a check that its answers carry the prediction. */
        const startArm = async (
          name: string,
          kind: 'rest' | 'grpc' | 'resth2' | 'plain' | 'forwarder' | 'fastifyForwarder',
          round: number,
        ) => {
          const started =
            kind === 'forwarder' || kind === 'fastifyForwarder'
              ? await startHelperProcess(
                  new URL('./bare-forwarder-process.ts', import.meta.url).pathname,
                  [
                    ...['--upstream', `http://${plane.modelHost.address}:${model.port}`],
                    ...['--path', `/v1/models/${MODEL}:predict`, '--cert', certFile, '--key', keyFile],
                    ...['--router', kind === 'forwarder' ? 'node' : 'fastify'],
                  ],
                  {
                    what: kind,
                    // Profiled beside the gateways, so the two can be compared function by function.
                    ...(process.env['EO_BENCH_CPU_PROF']
                      ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=/tmp/eo-gateway-grpc-prof/${name}-${round}`] }
                      : {}),
                  },
                )
              : await startGatewayBinary(plane.kubeconfigPath, NS, common, {
                  ...(kind === 'plain' ? {} : { tls: { certFile, keyFile } }),
                  profileDir: `/tmp/eo-gateway-grpc-prof/${name}-${round}`,
                });
          children.push(started.child);
          const pid = started.child.pid ?? 0;
          if (kind === 'grpc' || kind === 'resth2') {
            // One connection, opened again when the gateway has closed it as idle (its keep-alive timeout) while
            // the round's other arms started, as a client's channel reconnects.
            let current: ClientHttp2Session | undefined;
            const session = (): ClientHttp2Session => {
              if (current === undefined || current.closed || current.destroyed) {
                current = connect(`https://127.0.0.1:${started.port}`, { ca: tls.ca });
                sessions.push(current);
              }
              return current;
            };
            const h2 = kind === 'grpc' ? 'grpc' : 'rest';
            await sendH2(session(), h2, restPath, (body) =>
              expectPrediction(
                name,
                h2 === 'grpc'
                  ? (fromBinary(PredictResponse, body) as unknown as { predictions: unknown }).predictions
                  : (JSON.parse(body.toString()) as { predictions?: unknown }).predictions,
              ),
            );
            return {
              child: started.child,
              arm: { name, pid, call: () => sendH2(session(), h2, restPath) } satisfies Arm,
            };
          }
          const target = {
            host: '127.0.0.1',
            port: started.port,
            path: restPath,
            agent: kind === 'plain' ? httpAgent : httpsAgent,
            tls: kind !== 'plain',
          };
          await sendRest(target, (b) =>
            expectPrediction(name, (JSON.parse(b.toString()) as { predictions?: unknown }).predictions),
          );
          return { child: started.child, arm: { name, pid, call: () => sendRest(target) } satisfies Arm };
        };

        const roundFigures: PairFigures[][] = [];
        const latencyRounds: BlockLatencies[] = [];
        for (let r = 0; r < rounds; r++) {
          const started = [
            await startArm('rest', 'rest', r),
            await startArm('restB', 'rest', r),
            await startArm('grpc', 'grpc', r),
            await startArm('plain', 'plain', r),
            await startArm('resth2', 'resth2', r),
            await startArm('forwarder', 'forwarder', r),
            await startArm('fastifyForwarder', 'fastifyForwarder', r),
          ];
          const [reference, ...others] = started.map((s): Arm => s.arm);
          if (reference === undefined) throw new Error('no arms');
          // Warmed up in an order that rotates with the round: the last warmed has had the least time to settle.
          for (let k = 0; k < started.length; k++) {
            const a = (started[(k + r) % started.length] as (typeof started)[number]).arm;
            ok(await openLoop(a.call, Number(values.warmup), rate), `warm-up ${a.name}`);
          }
          roundFigures.push(
            await comparePaired(reference, others, {
              perBlock: Math.ceil(Number(values.requests) / blocks / rounds),
              blocks,
              rate,
              maxMs: maxMs / 2 / rounds,
            }),
          );
          latencyRounds.push(
            await interleavedLatencies([direct, reference, ...others], {
              perBlock: Math.ceil(Number(values['latency-cycles']) / latencyBlocks / rounds),
              blocks: latencyBlocks,
              maxMs: maxMs / 2 / rounds,
            }),
          );
          for (const s of sessions.splice(0)) s.close();
          httpsAgent.destroy();
          httpAgent.destroy();
          await stopChildren(started.map((s) => s.child));
          for (const s of started) children.splice(children.indexOf(s.child), 1);
        }

        const pairs = mergeRounds(roundFigures);
        const pair = (name: string): PairFigures => pairs.find((p) => p.arm === name) as PairFigures;
        const referenceCpu = pairs.reduce((s, p) => s + p.referenceCpuUs, 0) / pairs.length;
        const cpu = (name: string): number => (name === 'rest' ? referenceCpu : pair(name).cpuUs);
        const cpuInterval = (name: string) =>
          meanInterval(
            pair(name).blockCpuUs,
            roundFigures.flatMap((round, r) =>
              (round.find((p) => p.arm === name) as PairFigures).blockCpuUs.map(() => r),
            ),
          );
        const latency = mergeLatencyRounds(latencyRounds);
        const added = (name: string) =>
          addedP50(latency.blocks.get(name) ?? [], latency.blocks.get('direct') ?? [], latency.roundOfBlock, {
            resamples: 400,
          });
        const p50 = Object.fromEntries(ARMS.map((n) => [n, added(n)])) as Record<
          (typeof ARMS)[number],
          ReturnType<typeof added>
        >;
        const { rest: restP50, restB: restBP50, grpc: grpcP50, plain: plainP50, resth2: restH2P50 } = p50;
        const { forwarder: forwarderP50, fastifyForwarder: fastifyP50 } = p50;
        const aa = pairDifference(pair('restB'));
        const aaInterval = cpuInterval('restB');
        const grpcInterval = cpuInterval('grpc');
        const plainInterval = cpuInterval('plain');
        const restH2Interval = cpuInterval('resth2');
        const forwarderInterval = cpuInterval('forwarder');
        // Each forwarder is paired with the reference in blocks of its own: their difference is taken through those
        // pairs (fastify − rest) − (forwarder − rest), not from the arms' means, which the reference's drift between
        // blocks would enter.
        const fastifyInterval = cpuInterval('fastifyForwarder');
        const fastifyRouteUs = fastifyInterval.mean - forwarderInterval.mean;
        const fastifyRouteRounds = fastifyInterval.perRound.map((v, i) => v - (forwarderInterval.perRound[i] ?? 0));
        const grpcH2CpuRatio = cpu('grpc') / cpu('resth2');
        const grpcH2P50Ratio = grpcP50.addedMs / restH2P50.addedMs;
        const forwarderCpuRatio = cpu('rest') / cpu('forwarder');
        const load = loadavg()
          .map((l) => l.toFixed(2))
          .join(' ');
        const r1 = (x: number): number => Number(x.toFixed(1));
        const r3 = (x: number): number => Number(x.toFixed(3));
        const us = (i: { mean: number; low95: number; high95: number }): string =>
          `${i.mean.toFixed(1)} [95 % ${i.low95.toFixed(1)}, ${i.high95.toFixed(1)}] µs`;
        const ms = (a: ReturnType<typeof added>): string =>
          `${a.addedMs.toFixed(3)} ms [95 % ${a.low95Ms.toFixed(3)}, ${a.high95Ms.toFixed(3)}]`;
        const grpcCpuRatio = cpu('grpc') / cpu('rest');
        const grpcP50Ratio = grpcP50.addedMs / restP50.addedMs;
        const tlsCpuRatio = cpu('rest') / cpu('plain');
        const conditions = `one run, ${rounds} rounds of fresh gateway processes (compiled, one per arm, --auth=none, the same endpoint on a real kube-apiserver, one model server process), ${pair('grpc').latencies.length} calls per arm in ${pair('grpc').blockCpuUs.length} blocks shared with as many REST-over-TLS calls interleaved, each arm at ${rate}/s offered open loop; gRPC (and the resth2 arm's REST) over one keep-alive HTTP/2 connection, REST over keep-alive HTTP/1.1; CPU per thread from schedstat (ns), intervals: bootstrap over rounds, then blocks; added p50 over direct calls to the model server from ${latency.roundOfBlock.length} blocks of every arm's calls interleaved one at a time (${restP50.calls} calls per arm); load average ${load} on ${cpus().length} cores`;
        console.log(`B6-grpc: ${conditions}`);
        console.log(
          `  CPU per call: REST over TLS ${cpu('rest').toFixed(1)} µs, gRPC ${cpu('grpc').toFixed(1)} µs, REST plain HTTP ${cpu('plain').toFixed(1)} µs, REST over TLS on HTTP/2 ${cpu('resth2').toFixed(1)} µs, A/A twin ${cpu('restB').toFixed(1)} µs`,
        );
        console.log(
          `  differences against REST over TLS: gRPC ${us(grpcInterval)}, plain ${us(plainInterval)}, REST on HTTP/2 ${us(restH2Interval)}, A/A ${us(aaInterval)} (blocks' standard error ± ${aa.standardErrorUs.toFixed(1)})`,
        );
        console.log(
          `  added p50: REST over TLS ${ms(restP50)}, gRPC ${ms(grpcP50)}, plain ${ms(plainP50)}, REST on HTTP/2 ${ms(restH2P50)}, A/A twin ${ms(restBP50)} (direct p50 ${restP50.referenceP50Ms.toFixed(3)} ms)`,
        );
        console.log(
          `  gRPC ÷ REST both on HTTP/2: CPU ${grpcH2CpuRatio.toFixed(3)}, added p50 ${grpcH2P50Ratio.toFixed(3)} (goals ≤ 1.2); gRPC ÷ REST on HTTP/1.1: CPU ${grpcCpuRatio.toFixed(3)} (goal ≤ 1.3), added p50 ${grpcP50Ratio.toFixed(3)}; REST ÷ do-nothing forwarder, both TLS: CPU ${forwarderCpuRatio.toFixed(3)} (goal ≤ 1.3), forwarder ${cpu('forwarder').toFixed(1)} µs, added p50 ${ms(forwarderP50)}; TLS ÷ plain (REST): CPU ${tlsCpuRatio.toFixed(3)}, added p50 ${(restP50.addedMs / plainP50.addedMs).toFixed(3)}`,
        );
        console.log(
          `  a fastify route around the same forward: ${cpu('fastifyForwarder').toFixed(1)} µs against ${cpu('forwarder').toFixed(1)} µs, +${fastifyRouteUs.toFixed(1)} µs a call (rounds ${fastifyRouteRounds.map((v) => v.toFixed(1)).join(', ')}), ${((100 * fastifyRouteUs) / cpu('rest')).toFixed(1)} % of the gateway's REST call; added p50 ${ms(fastifyP50)}`,
        );
        const goal = { op: '<=', value: 1.3 } as const;
        const goalH2 = { op: '<=', value: 1.2 } as const;
        recordResults(
          [
            {
              id: 'B6.grpc.cpu_ratio',
              name: 'gateway CPU per call, gRPC Predict ÷ REST :predict, on the same TLS port (same binary and flags), same run',
              value: r3(grpcCpuRatio),
              unit: '×',
              goal,
              baseline: { value: r1(cpu('rest')), name: 'REST :predict over TLS, µs/call' },
              notes: `gRPC ${cpu('grpc').toFixed(1)} µs/call, REST ${cpu('rest').toFixed(1)}; gRPC minus REST ${us(grpcInterval)}; REST on HTTP/2 (the same connection kind as gRPC's) ${cpu('resth2').toFixed(1)} µs/call, gRPC ÷ that ${(cpu('grpc') / cpu('resth2')).toFixed(3)}; A/A ${us(aaInterval)}; ${conditions}`,
            },
            {
              id: 'B6.grpc.added_p50_ratio',
              name: 'latency the gateway adds to a call, median, gRPC Predict ÷ REST :predict over TLS, same run',
              value: r3(grpcP50Ratio),
              unit: '×',
              goal,
              baseline: { value: r3(restP50.addedMs), name: 'REST :predict over TLS, added p50, ms' },
              notes: `gRPC ${ms(grpcP50)}, REST ${ms(restP50)}, A/A twin ${ms(restBP50)}`,
            },
            {
              id: 'B6.grpc.cpu',
              name: 'gateway CPU per gRPC Predict call over TLS (one HTTP/2 connection)',
              value: r1(cpu('grpc')),
              unit: 'µs',
              baseline: { value: r1(cpu('rest')), name: 'REST :predict over TLS, same run, µs' },
            },
            {
              id: 'B6.grpc.added_p50',
              name: 'latency the gateway adds to a gRPC Predict call over TLS, median',
              value: r3(grpcP50.addedMs),
              unit: 'ms',
              baseline: { value: r3(restP50.addedMs), name: 'REST :predict over TLS, same run, ms' },
            },
            {
              id: 'B6.grpc.cpu_ratio_h2',
              name: 'gateway CPU per call, gRPC Predict ÷ REST :predict when both come over HTTP/2 on the TLS port: the gRPC codec and handler apart from the connection kind',
              value: r3(grpcH2CpuRatio),
              unit: '×',
              goal: goalH2,
              baseline: { value: r1(cpu('resth2')), name: 'REST :predict over TLS on HTTP/2, µs/call' },
              notes: `REST on HTTP/2 minus REST on HTTP/1.1 ${us(restH2Interval)}; load average ${load}`,
            },
            {
              id: 'B6.grpc.added_p50_ratio_h2',
              name: 'latency the gateway adds to a call, median, gRPC Predict ÷ REST :predict, both over HTTP/2 on the TLS port (the same client library, node:http2), same run',
              value: r3(grpcH2P50Ratio),
              unit: '×',
              goal: goalH2,
              baseline: { value: r3(restH2P50.addedMs), name: 'REST :predict over TLS on HTTP/2, added p50, ms' },
              notes: `gRPC ${ms(grpcP50)}, REST on HTTP/2 ${ms(restH2P50)}; load average ${load}`,
            },
            {
              id: 'B6.rest.forwarder_cpu_ratio',
              name: 'CPU per call, the gateway (REST :predict over TLS, HTTP/1.1 keep-alive) ÷ a do-nothing node:https + undici forwarder (bare-forwarder.ts) to the same model server, called the same way, same run',
              value: r3(forwarderCpuRatio),
              unit: '×',
              goal,
              baseline: { value: r1(cpu('forwarder')), name: 'do-nothing TLS forwarder, µs/call' },
              notes: `gateway ${cpu('rest').toFixed(1)} µs/call; forwarder minus gateway ${us(forwarderInterval)}; added p50 gateway ${ms(restP50)}, forwarder ${ms(forwarderP50)}; load average ${load}`,
            },
            {
              id: 'B6.rest.fastify_route_cpu',
              name: "CPU a fastify route adds to a call: the do-nothing TLS forwarder served from a fastify route (hijacked reply, body unread) minus the same forwarder on node:https, same run: what the gateway's raw prediction path saves",
              value: r1(fastifyRouteUs),
              unit: 'µs',
              baseline: { value: r1(cpu('rest')), name: 'the gateway, REST :predict over TLS, µs/call' },
              notes: `fastify-routed forwarder ${cpu('fastifyForwarder').toFixed(1)} µs/call, node:https forwarder ${cpu('forwarder').toFixed(1)}; per round ${fastifyRouteRounds.map(r1).join(', ')} µs; ${((100 * fastifyRouteUs) / cpu('rest')).toFixed(1)} % of the gateway's REST call; added p50 fastify-routed ${ms(fastifyP50)}, node:https ${ms(forwarderP50)}; A/A ${us(aaInterval)}; load average ${load}`,
            },
            {
              id: 'B6.tls.cpu_ratio',
              name: 'gateway CPU per REST :predict call, TLS ÷ plain HTTP, keep-alive, same run',
              value: r3(tlsCpuRatio),
              unit: '×',
              baseline: { value: r1(cpu('plain')), name: 'REST :predict over plain HTTP, µs/call' },
              notes: `TLS ${cpu('rest').toFixed(1)} µs/call, plain ${cpu('plain').toFixed(1)}; plain minus TLS ${us(plainInterval)}; added p50 TLS ${ms(restP50)}, plain ${ms(plainP50)}`,
            },
            {
              id: 'B6.grpc.aa_cpu',
              name: 'A/A control: CPU per call of a second REST-over-TLS gateway process minus the first',
              value: r1(aaInterval.mean),
              unit: 'µs',
              notes: `95 % interval [${aaInterval.low95.toFixed(1)}, ${aaInterval.high95.toFixed(1)}] (rounds, then blocks); blocks' standard error ± ${aa.standardErrorUs.toFixed(1)}; added p50 of the twin minus the first ${(restBP50.addedMs - restP50.addedMs).toFixed(3)} ms`,
            },
          ],
          {
            grpc: {
              cpuUsPerCall: Object.fromEntries(ARMS.map((n) => [n, r1(cpu(n))])),
              addedP50Ms: {
                rest: r3(restP50.addedMs),
                restB: r3(restBP50.addedMs),
                grpc: r3(grpcP50.addedMs),
                plain: r3(plainP50.addedMs),
                resth2: r3(restH2P50.addedMs),
                forwarder: r3(forwarderP50.addedMs),
                fastifyForwarder: r3(fastifyP50.addedMs),
              },
              cpuDifferencePerRoundUs: {
                grpc: grpcInterval.perRound.map(r1),
                plain: plainInterval.perRound.map(r1),
                restB: aaInterval.perRound.map(r1),
                resth2: restH2Interval.perRound.map(r1),
                forwarder: forwarderInterval.perRound.map(r1),
                fastifyForwarder: fastifyInterval.perRound.map(r1),
              },
            },
          },
        );
      },
    );
  } finally {
    for (const s of sessions) s.close();
    httpsAgent.destroy();
    httpAgent.destroy();
    await tlsFiles.remove();
  }
}

await driver();
