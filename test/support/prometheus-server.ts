/**
 * A real Prometheus (Debian's binary, see prometheus.ts) on loopback for a test: scrapes the given
 * targets every second with a bearer token, as a cluster's Prometheus scrapes /metrics behind
 * controller-runtime's authentication filter; queried over its HTTP API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { freeLoopbackPort } from '../../dev/cluster/ports.js';
import { ensurePrometheus } from './prometheus.js';

export interface ScrapeJob {
  readonly name: string;
  /** `127.0.0.1:PORT` serving /metrics. */
  readonly target: string;
}

export interface QueryResult {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export class PrometheusServer {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly output: () => string,
  ) {}

  static async start(jobs: readonly ScrapeJob[], bearerToken: string): Promise<PrometheusServer> {
    const { prometheus } = await ensurePrometheus();
    const dir = await mkdtemp(join(tmpdir(), 'eo-prometheus-'));
    await writeFile(join(dir, 'token'), bearerToken, { mode: 0o600 });
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      scrape_configs: jobs.map((j) => ({
        job_name: j.name,
        authorization: { type: 'Bearer', credentials_file: join(dir, 'token') },
        static_configs: [{ targets: [j.target] }],
      })),
    };
    await writeFile(join(dir, 'prometheus.yml'), yaml.dump(config));
    const port = await freeLoopbackPort();
    const child = spawn(
      prometheus,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-20_000)));
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, child, dir, () => output);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${output}`);
      try {
        if ((await fetch(`${server.url}/-/ready`)).status === 200) return server;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`prometheus not ready within 60 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** An instant query (/api/v1/query); throws with Prometheus's error for a query it refuses. */
  async query(expr: string): Promise<QueryResult[]> {
    const res = await fetch(`${this.url}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) });
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: QueryResult[] };
    };
    if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error ?? res.status}`);
    return body.data?.result ?? [];
  }

  /** The scrape targets and their health ("up", "down", "unknown") with the last scrape error. */
  async targets(): Promise<{ job: string; health: string; lastError: string }[]> {
    const res = await fetch(`${this.url}/api/v1/targets`);
    const body = (await res.json()) as {
      data: { activeTargets: { labels: { job: string }; health: string; lastError: string }[] };
    };
    return body.data.activeTargets.map((t) => ({ job: t.labels.job, health: t.health, lastError: t.lastError }));
  }

  get log(): string {
    return this.output();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
