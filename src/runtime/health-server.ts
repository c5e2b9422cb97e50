/**
 * The operational HTTP endpoint (node:http, no framework): `/metrics` in Prometheus text
 * format, `/healthz` (the process serves requests) and `/readyz` (every registered check
 * passes: informers synced, webhook certificates loaded, ...). Readiness does not depend on
 * leadership: a standby replica is ready too, it just does not reconcile, so a rollout can
 * proceed and the standby can take over at once.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { requestIdOf } from '../http/request-id.js';
import { reportServerError, type ErrorLog } from '../http/server-errors.js';
import { HEALTH_SERVER_LIMITS } from '../http/server-limits.js';
import { createHttpServer } from '../http/server.js';
import { metricsRegistry } from '../base/metrics.js';

/** A named check: `true` passes; `false` or a string (the reason) fails. */
export type HealthCheck = () => boolean | string;

export class HealthChecks {
  private readonly ready = new Map<string, HealthCheck>();
  private readonly live = new Map<string, HealthCheck>();

  addReadyCheck(name: string, check: HealthCheck): void {
    this.ready.set(name, check);
  }

  addLiveCheck(name: string, check: HealthCheck): void {
    this.live.set(name, check);
  }

  /** `{ ok, lines }`, lines in the `[+]name ok` / `[-]name failed: reason` form of the apiserver's /readyz?verbose. */
  evaluate(which: 'ready' | 'live'): { ok: boolean; lines: string[] } {
    const checks = which === 'ready' ? this.ready : this.live;
    let ok = true;
    const lines: string[] = [];
    for (const [name, check] of checks) {
      let result: boolean | string;
      try {
        result = check();
      } catch (err) {
        result = err instanceof Error ? err.message : String(err);
      }
      if (result === true) lines.push(`[+]${name} ok`);
      else {
        ok = false;
        lines.push(`[-]${name} failed${typeof result === 'string' ? `: ${result}` : ''}`);
      }
    }
    return { ok, lines };
  }
}

export interface HealthServerOptions {
  readonly port: number;
  /** Default `0.0.0.0`; tests use `127.0.0.1`. */
  readonly host?: string;
  readonly checks: HealthChecks;
  readonly registry?: Registry;
  /** Decides whether a /metrics request is served (undefined) or refused (the answer); absent = open. /healthz and /readyz stay open. */
  readonly guardMetrics?: (
    req: http.IncomingMessage,
  ) => Promise<{ status: number; headers: Record<string, string>; body: string } | undefined>;
  /** Where a failing /metrics is reported (server-errors.ts); default nowhere but the metric. */
  readonly log?: ErrorLog;
}

export interface RunningHealthServer {
  readonly port: number;
  close(): Promise<void>;
}

async function serveMetrics(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  registry: Registry,
  guard: HealthServerOptions['guardMetrics'],
): Promise<void> {
  const refusal = guard === undefined ? undefined : await guard(req);
  if (refusal !== undefined) {
    res.writeHead(refusal.status, refusal.headers).end(refusal.body);
    return;
  }
  const text = await registry.metrics();
  res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
}

export async function startHealthServer(options: HealthServerOptions): Promise<RunningHealthServer> {
  const registry = options.registry ?? metricsRegistry;
  const log: ErrorLog = options.log ?? { error: () => undefined };
  const server = createHttpServer({
    limits: HEALTH_SERVER_LIMITS,
    // The port gives the request id and refuses a second Host header; probes and scrapes get no access line.
    front: {
      refuse: (_req, res, refusal) => {
        res
          .writeHead(refusal.status, { 'Content-Type': 'text/plain', Connection: 'close' })
          .end(`${refusal.message}\n`);
      },
    },
    onRequest: (req, res) => {
      const requestId = requestIdOf(req);
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD' }).end();
        return;
      }
      if (url.pathname === '/metrics') {
        serveMetrics(req, res, registry, options.guardMetrics).catch((err: unknown) => {
          reportServerError(log, { server: 'health', route: '/metrics', requestId, status: 500, err });
          res
            .writeHead(500, { 'Content-Type': 'text/plain' })
            .end(`metrics could not be collected; request id ${requestId}\n`);
        });
        return;
      }
      if (url.pathname === '/healthz' || url.pathname === '/livez' || url.pathname === '/readyz') {
        const { ok, lines } = options.checks.evaluate(url.pathname === '/readyz' ? 'ready' : 'live');
        const body = url.searchParams.has('verbose') || !ok ? `${lines.join('\n')}\n${ok ? 'ok' : 'not ok'}\n` : 'ok\n';
        res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(body);
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
