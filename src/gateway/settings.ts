/**
 * The gateway's settings: one typed object from the command line to the stages. `endpoint-operator gateway` reads
 * its flags into it (src/cli/gateway.ts), GatewayServer resolves what a caller left out once (`gatewaySettings`), and
 * hands the same object on: the pipeline and each stage take the part they read with `Pick<GatewaySettings, ...>`.
 * A new setting is a field and its default here, a flag, and a name in the Pick of whatever reads it.
 */
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { GATEWAY_SERVER_LIMITS, type ServerLimits } from '../http/server-limits.js';
import type { AuthSettings } from './auth/settings.js';
import { DEFAULT_MAX_BODY_BYTES_PER_CALLER, DEFAULT_MAX_CALLS_PER_CALLER } from './fairness.js';
import { DEFAULT_LARGE_BODY_BYTES } from './json-worker-pool.js';
import type { OutlierOptions } from './outlier-detection.js';

export interface GatewaySettings {
  /** Namespaces to watch; empty = all. */
  readonly namespaces: readonly string[];
  readonly listen: { readonly host: string; readonly port: number };
  /** /healthz, /readyz and /metrics; absent or a negative port = not served. */
  readonly health: { readonly host: string; readonly port: number } | undefined;
  /** Authentication and authorization of calls and /metrics (auth/settings.ts; NO_AUTH = --auth=none). */
  readonly auth: AuthSettings;
  /** Deadline of one model server call (retry included). */
  readonly upstreamTimeoutMs: number;
  /** Deadline of a connection to a model server (then the call is retried on another endpoint). */
  readonly connectTimeoutMs: number;
  /** Largest request body; bigger ones are answered 413 (Vertex's online prediction limit by default). */
  readonly bodyLimitBytes: number;
  /** Lower-case header whose value pins a caller to one deployed model while the split is unchanged; undefined = off. */
  readonly stickyHeader: string | undefined;
  readonly requestLog: {
    /** Bodies in sampled records are truncated to this size. */
    readonly payloadLimitBytes: number;
    /** Sampled records per second; the rest are counted, not written. */
    readonly maxRecordsPerSecond: number;
    /** URL that sampled calls are also sent to as KServe-compatible CloudEvents; undefined = only the log. */
    readonly sink: string | undefined;
    /** The sink's queue (cloudevents-sink.ts); a field left out takes the sink's default. */
    readonly sinkQueue: { readonly maxEvents?: number; readonly timeoutMs?: number };
  };
  /** Ejection of failing model server endpoints (outlier-detection.ts); a field left out takes its default. */
  readonly outliers: OutlierOptions;
  /** Annotation prefixes the registry lookup leaves out of effective annotations (as the operator is configured). */
  readonly reservedPrefixes: readonly string[];
  /** Timeouts and connection cap of the API port. */
  readonly serverLimits: ServerLimits;
  /**
   * How long close() keeps answering HTTP/1.1 calls with `Connection: close` before the port closes, so that a
   * rolling restart loses no keep-alive client's call (src/http/drain.ts); 0 closes at once.
   */
  readonly shutdownDrainMs: number;
  /** Prediction calls in flight per caller; one more is answered 429 (fairness.ts). */
  readonly maxCallsPerCaller: number;
  /** Request-body bytes in flight per caller; one more call is answered 429 (fairness.ts). */
  readonly maxBodyBytesPerCaller: number;
  /** Request and answer bodies from this size up have their JSON work done on worker threads (json-worker-pool.ts). */
  readonly largeBodyBytes: number;
  /**
   * Vertex's write API (writes/): false = every write method answers FAILED_PRECONDITION naming the chart's
   * gateway.apiWrites.enabled (the gateway's ServiceAccount then has no write rights).
   */
  readonly apiWrites: boolean;
}

/** What every gateway must be told: where to watch, where to listen, and how to check callers. */
type Given = 'namespaces' | 'listen' | 'auth';
/** Settings whose fields default one by one. */
type Nested = 'requestLog' | 'outliers' | 'serverLimits';

/** A caller's settings: the required ones, and any others; nested objects may name only some of their fields. */
export type GatewaySettingsInput = Pick<GatewaySettings, Given> & {
  readonly [K in Exclude<keyof GatewaySettings, Given>]?: K extends Nested
    ? Partial<GatewaySettings[K]>
    : GatewaySettings[K];
};

export const DEFAULT_BODY_LIMIT_BYTES = 1_500_000;
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

export const DEFAULT_GATEWAY_SETTINGS: Omit<GatewaySettings, Given> = {
  health: undefined,
  upstreamTimeoutMs: DEFAULT_UPSTREAM_TIMEOUT_MS,
  connectTimeoutMs: 2_000,
  bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
  stickyHeader: undefined,
  requestLog: { payloadLimitBytes: 16_384, maxRecordsPerSecond: 100, sink: undefined, sinkQueue: {} },
  outliers: {},
  reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
  serverLimits: GATEWAY_SERVER_LIMITS,
  shutdownDrainMs: 0,
  maxCallsPerCaller: DEFAULT_MAX_CALLS_PER_CALLER,
  maxBodyBytesPerCaller: DEFAULT_MAX_BODY_BYTES_PER_CALLER,
  largeBodyBytes: DEFAULT_LARGE_BODY_BYTES,
  apiWrites: true,
};

/**
 * Every setting resolved: a field left out takes its default; the sticky header is compared lower-case and '' turns
 * it off, as does an empty sink URL.
 */
export function gatewaySettings(input: GatewaySettingsInput): GatewaySettings {
  const d = DEFAULT_GATEWAY_SETTINGS;
  const sticky = input.stickyHeader?.trim().toLowerCase();
  const requestLog = { ...d.requestLog, ...input.requestLog };
  return {
    namespaces: input.namespaces,
    listen: input.listen,
    health: input.health,
    auth: input.auth,
    upstreamTimeoutMs: input.upstreamTimeoutMs ?? d.upstreamTimeoutMs,
    connectTimeoutMs: input.connectTimeoutMs ?? d.connectTimeoutMs,
    bodyLimitBytes: input.bodyLimitBytes ?? d.bodyLimitBytes,
    stickyHeader: sticky === '' ? undefined : sticky,
    requestLog: { ...requestLog, sink: requestLog.sink === '' ? undefined : requestLog.sink },
    outliers: { ...d.outliers, ...input.outliers },
    reservedPrefixes: input.reservedPrefixes ?? d.reservedPrefixes,
    serverLimits: { ...d.serverLimits, ...input.serverLimits },
    shutdownDrainMs: input.shutdownDrainMs ?? d.shutdownDrainMs,
    maxCallsPerCaller: input.maxCallsPerCaller ?? d.maxCallsPerCaller,
    maxBodyBytesPerCaller: input.maxBodyBytesPerCaller ?? d.maxBodyBytesPerCaller,
    largeBodyBytes: input.largeBodyBytes ?? d.largeBodyBytes,
    apiWrites: input.apiWrites ?? d.apiWrites,
  };
}
