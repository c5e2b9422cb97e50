/**
 * h2load, nghttp2's HTTP/2 (and, with `--h1`, HTTP/1.1) load tool, from Debian's `nghttp2-client`, installed on first
 * use like the control plane's packages (dev/host/apt.ts). It is run from inside the real node's network namespace,
 * where a Service's cluster IP answers (dev/cluster/real-node/node-network.ts). Its per-request log
 * (`--log-file`: start time in µs since the epoch, status, µs until the response ended) gives the latency
 * percentiles; its summary gives the counts and the rate.
 *
 * h2load does not verify the server's certificate (it has no option to trust a CA): the TLS is the gateway's real
 * TLS, negotiated with ALPN `h2` or `http/1.1`, but not authenticated by the client.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile } from '../../bench/signin-flood-probe.js';
import { ensureDebianTool } from './debian-tools.js';
import { runLoadTool } from './load-tool.js';

export function ensureH2load(log?: (line: string) => void): Promise<string> {
  return ensureDebianTool('nghttp2-client', 'h2load', log);
}

export interface H2loadRun {
  /** https://<address>:<port><path> */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly calls: number;
  /** Connections; with HTTP/2 each carries `streams` concurrent calls, with HTTP/1.1 one at a time. */
  readonly connections: number;
  readonly streams: number;
  readonly http1: boolean;
}

export interface LoadFigures {
  readonly calls: number;
  /** Calls answered 2xx. */
  readonly ok: number;
  /** Calls not answered 2xx: errors, timeouts and other statuses, as the tool counts them. */
  readonly failed: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The load tool's own CPU (user + system) over the run, seconds: load-tool.ts. */
  readonly toolCpuSeconds: number;
  /** What the tool said about failures, short. */
  readonly failures: string;
}

/** `requests: 300 total, 300 started, 300 done, 300 succeeded, 0 failed, 0 errored, 0 timeout` and `status codes: 300 2xx, …`. */
export function parseH2loadSummary(text: string): {
  total: number;
  succeeded: number;
  failed: number;
  errored: number;
  timeout: number;
  ok2xx: number;
  seconds: number;
} {
  const requests = text.match(
    /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/,
  );
  const codes = text.match(/status codes: (\d+) 2xx/);
  const finished = text.match(/finished in ([\d.]+)(ms|s),/);
  if (requests === null || codes === null || finished === null) throw new Error(`h2load printed no summary:\n${text}`);
  const n = (i: number): number => Number(requests[i]);
  const seconds = Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1);
  return { total: n(1), succeeded: n(2), failed: n(3), errored: n(4), timeout: n(5), ok2xx: Number(codes[1]), seconds };
}

/** Runs h2load once from the real node's network namespace; resolves to its figures (it does not judge them). */
export async function runH2load(h2load: string, run: H2loadRun): Promise<LoadFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-h2load-'));
  try {
    const bodyFile = join(dir, 'body.json');
    const logFile = join(dir, 'requests.tsv');
    await writeFile(bodyFile, run.body);
    const args = [
      ...(run.http1 ? ['--h1'] : []),
      '-n',
      String(run.calls),
      '-c',
      String(run.connections),
      '-m',
      String(run.http1 ? 1 : run.streams),
      '-d',
      bodyFile,
      '--log-file',
      logFile,
      ...Object.entries(run.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
      run.url,
    ];
    const { stdout, cpuSeconds } = await runLoadTool(h2load, args, 16 * 1024 * 1024);
    const summary = parseH2loadSummary(stdout);
    const protocol = run.http1 ? 'http/1.1' : 'h2';
    if (!stdout.includes(`Application protocol: ${protocol}`))
      throw new Error(`h2load did not negotiate ${protocol}:\n${stdout}`);
    const latenciesMs = (await readFile(logFile, 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => Number(l.split('\t')[2]) / 1000);
    const failed = summary.total - summary.ok2xx;
    return {
      calls: summary.total,
      ok: summary.ok2xx,
      failed,
      seconds: summary.seconds,
      perSecond: summary.total / summary.seconds,
      p50Ms: percentile(latenciesMs, 50),
      p99Ms: percentile(latenciesMs, 99),
      toolCpuSeconds: cpuSeconds,
      failures:
        failed === 0
          ? ''
          : stdout
              .split('\n')
              .filter((l) => /requests:|status codes:|error|fail/i.test(l))
              .join('; '),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
