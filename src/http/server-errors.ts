/**
 * Every 5xx a server of the process answers is logged once, at error level, and counted: the server,
 * the route (the pattern, not the caller's path), the request id (also in the answer's X-Request-Id),
 * the cause and its stack. Never the payload, a header or a credential: the callers of this pass
 * only the error.
 */
import { Counter } from 'prom-client';
import { metricsRegistry } from '../base/metrics-registry.js';

/** The servers of the process, the `server` label. */
export type ServerName = 'gateway' | 'signin' | 'webhook' | 'health';

export const httpServerErrors = new Counter({
  name: 'endpoint_operator_http_server_errors_total',
  help: 'Answers with a 5xx status, by server (gateway, signin, webhook, health) and cause (the error class, or the Google status for a gateway error).',
  labelNames: ['server', 'cause'] as const,
  registers: [metricsRegistry],
});

/** A bounded label value: the error's class name (or given cause), letters and digits only, at most 40. */
export function causeOf(err: unknown, cause?: string): string {
  const raw = cause ?? (err instanceof Error ? (err.constructor?.name ?? err.name) : typeof err);
  const clean = raw.replace(/[^A-Za-z0-9_]/g, '').slice(0, 40);
  return clean === '' ? 'Error' : clean;
}

export interface ServerErrorReport {
  readonly server: ServerName;
  /** The route pattern or a fixed name (`predict`, `/metrics`), never the raw URL. */
  readonly route: string;
  readonly requestId: string;
  readonly status: number;
  readonly err: unknown;
  /** A cause label other than the error's class (the gateway's Google status, e.g. UNAVAILABLE). */
  readonly cause?: string;
}

/** Any pino-like logger (pino's, fastify's request.log). */
export interface ErrorLog {
  error(obj: object, msg: string): void;
}

export function reportServerError(log: ErrorLog, report: ServerErrorReport): void {
  const cause = causeOf(report.err, report.cause);
  httpServerErrors.inc({ server: report.server, cause });
  const err = report.err instanceof Error ? report.err : new Error(String(report.err));
  log.error(
    {
      server: report.server,
      route: report.route,
      requestId: report.requestId,
      status: report.status,
      cause,
      err: { type: err.name, message: err.message, stack: err.stack },
    },
    'request failed with a server error',
  );
}
