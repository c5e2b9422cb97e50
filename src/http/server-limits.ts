/**
 * Bounded time and bounded connections for every port of the process. Node's defaults are generous
 * (300 s for a request, 60 s for headers, checked every 30 s) and fastify turns the request timeout
 * off; a client sending one byte a second held a sign-in connection forever. Here:
 * - `headersTimeoutMs`: the request line and headers must arrive within it;
 * - `requestTimeoutMs`: the whole request, body included, must arrive within it;
 * - `keepAliveTimeoutMs`: an idle kept-alive connection is closed after it.
 * Node answers the first two with `408 Request Timeout` and closes the connection itself (servers
 * with their own clientError handler keep that answer: see isRequestTimeout). The check runs every
 * second instead of every 30 s (`connectionsCheckingInterval`), so a limit is kept to about a second.
 *
 * `maxConnections` caps the open connections of the port (connection-cap.ts).
 */
import type { Server as HttpServer, ServerOptions } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ConnectionCap } from './connection-cap.js';

export interface ServerLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
}

/** The gateway's port: 1.5 MB bodies from slow clients get a minute; keep-alive above the usual 60 s of load balancers. */
export const GATEWAY_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 4096,
};
/** The sign-in API: 16 KiB JSON bodies. */
export const SIGNIN_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
};
/** The webhooks: one caller, the kube-apiserver, which keeps connections alive and times out at 10-30 s itself. */
export const WEBHOOK_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 60_000,
  maxConnections: 256,
};
/** Health and metrics: probes and a scraper. */
export const HEALTH_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 64,
};

/** What is wrong with `limits` (for flag errors), or undefined. Node refuses a headers timeout above the request timeout. */
export function checkServerLimits(limits: ServerLimits): string | undefined {
  for (const [name, v] of Object.entries(limits)) {
    if (!Number.isInteger(v) || v <= 0) return `${name} must be a positive whole number, got ${v}`;
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    return `the headers timeout (${limits.headersTimeoutMs / 1000} s) must not exceed the request timeout (${limits.requestTimeoutMs / 1000} s)`;
  return undefined;
}

/** Options for http.createServer / https.createServer (the checking interval can only be set there). */
export function serverTimeoutOptions(limits: ServerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
  };
}

/** Sets the timeouts again (frameworks set some after creation) and installs the connection cap. */
export function applyServerLimits(server: HttpServer | HttpsServer, limits: ServerLimits): ConnectionCap {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  return ConnectionCap.install(server, limits.maxConnections);
}

/** Whether a clientError is Node's own request/headers timeout (to be answered 408, not 400). */
export function isRequestTimeout(err: NodeJS.ErrnoException): boolean {
  return err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
}
