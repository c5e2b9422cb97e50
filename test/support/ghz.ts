/**
 * ghz (github.com/bojand/ghz), the gRPC load tool, built from the Go module proxy (tools/ghz) on first use and
 * cached like the other tools (dev/cluster/go-build.ts). It reads the methods from the descriptor set the gateway
 * itself serves (`--protoset`: Google's protos compiled by `npm run generate`), trusts the gateway's CA
 * (`--cacert`, checked against the Service's name with `--cname`) and sends the caller's bearer token as metadata.
 * It is run from inside the real node's network namespace, where a Service's cluster IP answers.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';
import { GOOGLE_APIS_DESCRIPTOR_SET } from '../../src/gateway/grpc/google-apis.generated.js';
import type { LoadFigures } from './h2load.js';
import { runLoadTool } from './load-tool.js';

const VERSION = 'v0.120.0';

export const GHZ: GoModuleBuild = {
  module: 'ghz',
  version: VERSION,
  binaries: ['ghz'],
  ldflags: [`-X main.version=${VERSION}`],
  versionCheck: { args: () => ['--version'], expect: VERSION },
};

export async function ensureGhz(): Promise<string> {
  const binary = (await ensureGoBuild(GHZ))['ghz'];
  if (binary === undefined) throw new Error('no ghz among the built binaries');
  return binary;
}

export interface GhzRun {
  /** <address>:<port> */
  readonly target: string;
  /** `package.Service/Method` */
  readonly call: string;
  /** The request message as proto3 JSON. */
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, string>>;
  readonly caPem: string;
  /** The name the server's certificate is checked against. */
  readonly servername: string;
  readonly calls: number;
  /** Concurrent calls, spread evenly over `connections` HTTP/2 connections. */
  readonly concurrency: number;
  readonly connections: number;
}

/** The part of ghz's `--format json` report read here (durations in nanoseconds). */
interface GhzReport {
  readonly count: number;
  readonly total: number;
  readonly rps: number;
  readonly statusCodeDistribution?: Record<string, number>;
  readonly errorDistribution?: Record<string, number>;
  readonly latencyDistribution?: { percentage: number; latency: number }[] | null;
}

/** Runs ghz once from the real node's network namespace; resolves to its figures (it does not judge them). */
export async function runGhz(ghz: string, run: GhzRun): Promise<LoadFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-ghz-'));
  try {
    const protoset = join(dir, 'google-apis.protoset');
    const ca = join(dir, 'ca.pem');
    const data = join(dir, 'data.json');
    await writeFile(protoset, Buffer.from(GOOGLE_APIS_DESCRIPTOR_SET, 'base64'));
    await writeFile(ca, run.caPem);
    await writeFile(data, JSON.stringify(run.data));
    const args = [
      '--protoset',
      protoset,
      '--call',
      run.call,
      '--data-file',
      data,
      '--metadata',
      JSON.stringify(run.metadata),
      '--cacert',
      ca,
      '--cname',
      run.servername,
      '--total',
      String(run.calls),
      '--concurrency',
      String(run.concurrency),
      '--connections',
      String(run.connections),
      '--timeout',
      '10s',
      '--skipFirst',
      '0',
      // The data and metadata hold no template actions. Without these ghz still makes each call's template data
      // with sprig's functions, which its help calls worth disabling "for better performance": its own CPU per
      // call is charged to the machine the gateway is measured on.
      '--disable-template-functions',
      '--disable-template-data',
      '--format',
      'json',
      run.target,
    ];
    // ghz exits 0 when the calls ran, whatever their status: the report says how they went.
    const { stdout, cpuSeconds } = await runLoadTool(ghz, args, 256 * 1024 * 1024);
    const report = JSON.parse(stdout) as GhzReport;
    const ok = report.statusCodeDistribution?.['OK'] ?? 0;
    const latency = (p: number): number =>
      (report.latencyDistribution?.find((d) => d.percentage === p)?.latency ?? NaN) / 1e6;
    const seconds = report.total / 1e9;
    return {
      calls: report.count,
      ok,
      failed: report.count - ok,
      seconds,
      perSecond: report.count / seconds,
      p50Ms: latency(50),
      p99Ms: latency(99),
      toolCpuSeconds: cpuSeconds,
      failures:
        report.count === ok
          ? ''
          : JSON.stringify({ status: report.statusCodeDistribution, errors: report.errorDistribution }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
