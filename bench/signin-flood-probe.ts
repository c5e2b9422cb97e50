/**
 * What the B5-flood server process says about itself (bench/signin-flood.ts): how late its event loop
 * ran during the flood (monitorEventLoopDelay: every microsecond a refusal costs the main thread
 * delays the other address's answers), and with EO_BENCH_DIAG=1 where the other address's login
 * spent its time in the server: waiting for a verification slot, in argon2 (on libuv's pool), and
 * from arrival to answer. The parent asks with a `stats` line on stdin; each answer is one JSON line
 * on stdout covering the time since the previous one.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { SignInContext } from '../src/signin/context.js';
import type { VerificationAdmission } from '../src/signin/verification-queue.js';

export interface Spread {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly n: number;
}

export interface FloodStats {
  /** Event-loop delay, ms. */
  readonly eventLoopDelay: Spread;
  /** Per client key, ms: waiting for a slot, and the verification itself (EO_BENCH_DIAG only). */
  readonly verifications?: Record<string, { readonly wait: Spread; readonly argon2: Spread }>;
  /** The measured client's logins from onRequest to onResponse, ms (EO_BENCH_DIAG only). */
  readonly measuredInServer?: Spread;
}

/** The nearest-rank percentile (the smallest value with at least p % of the values at or below it). */
export function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function spreadOf(xs: readonly number[]): Spread {
  const at = (p: number): number => Number(percentile(xs, p).toFixed(1));
  return { p50: at(50), p99: at(99), max: at(100), n: xs.length };
}

/** Starts measuring; `measuredAddress`: the client whose logins are timed in the server. */
export function installFloodProbe(
  app: FastifyInstance,
  context: SignInContext,
  measuredAddress: string,
  diagnose: boolean,
): void {
  const eld = monitorEventLoopDelay({ resolution: 5 });
  eld.enable();
  const verifications = new Map<string, { wait: number[]; argon2: number[] }>();
  const inServer: number[] = [];
  if (diagnose) {
    const queue = context.verifications;
    const admit = queue.admit.bind(queue);
    // Times each admitted verification from admission to its slot, and the verification itself.
    queue.admit = (client: string): VerificationAdmission => {
      const admission = admit(client);
      if (!admission.admitted) return admission;
      const admittedAt = performance.now();
      const { ticket } = admission;
      return {
        admitted: true,
        ticket: {
          cancel: () => ticket.cancel(),
          run: (verify) =>
            ticket.run(async () => {
              const startedAt = performance.now();
              try {
                return await verify();
              } finally {
                let times = verifications.get(client);
                if (times === undefined) verifications.set(client, (times = { wait: [], argon2: [] }));
                times.wait.push(startedAt - admittedAt);
                times.argon2.push(performance.now() - startedAt);
              }
            }),
        },
      };
    };
    const arrived = new WeakMap<object, number>();
    app.addHook('onRequest', async (request) => {
      if (request.ip === measuredAddress) arrived.set(request.raw, performance.now());
    });
    app.addHook('onResponse', async (request) => {
      const t = arrived.get(request.raw);
      if (t !== undefined) inServer.push(performance.now() - t);
    });
  }
  process.stdin.setEncoding('utf8').on('data', (d: string) => {
    for (const line of d.split('\n')) {
      if (line.trim() !== 'stats') continue;
      const stats: FloodStats = {
        eventLoopDelay: {
          p50: eld.percentile(50) / 1e6,
          p99: eld.percentile(99) / 1e6,
          max: eld.max / 1e6,
          n: eld.count,
        },
        ...(diagnose
          ? {
              verifications: Object.fromEntries(
                [...verifications].map(([client, t]) => [
                  client,
                  { wait: spreadOf(t.wait), argon2: spreadOf(t.argon2) },
                ]),
              ),
              measuredInServer: spreadOf(inServer),
            }
          : {}),
      };
      process.stdout.write(`${JSON.stringify(stats)}\n`);
      eld.reset();
      verifications.clear();
      inServer.length = 0;
    }
  });
}
