/**
 * The OpenTelemetry SDK's own diagnostics as this process's log lines. The SDK reports through the
 * API's `diag`: a batch of spans its exporter could not send (the collector refused it or was
 * unreachable after the exporter's retries), an OTEL_* value it could not read and the default it took
 * instead. With no DiagLogger registered those reports go nowhere, and a collector that refuses every
 * batch shows only as traces that never arrive. `OTEL_LOG_LEVEL` (the specification's variable: none,
 * error, warn, info, debug, verbose or all; default info) sets how much of it is logged.
 */
import { format } from 'node:util';
import { diag, DiagLogLevel, type DiagLogFunction, type DiagLogger } from '@opentelemetry/api';
import { diagLogLevelFromString, setGlobalErrorHandler } from '@opentelemetry/core';
import type { Logger } from '../base/logger.js';
import type { Environment } from './environment.js';

type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A DiagLogger writing to `log` (component `opentelemetry`); an Error among the arguments goes in `err`, with its stack. */
export function diagLoggerOf(log: Logger): DiagLogger {
  const out = log.child({ component: 'opentelemetry' });
  const at =
    (level: Level): DiagLogFunction =>
    (message, ...args) => {
      const err = args.find((a): a is Error => a instanceof Error);
      const text = format(message, ...args.filter((a) => a !== err));
      if (err === undefined) out[level](text);
      else out[level]({ err }, text);
    };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('trace') };
}

/**
 * Registers diagLoggerOf(log) as the API's diag logger, at the level OTEL_LOG_LEVEL names. The errors the
 * SDK hands its global error handler (a failed export, mostly) go to it as errors with their message as
 * the line's (the SDK's own handler writes a JSON string of the error).
 */
export function logOpenTelemetryDiagnostics(log: Logger, env: Environment): void {
  const logger = diagLoggerOf(log);
  setGlobalErrorHandler((ex) => {
    if (ex instanceof Error) diag.error('%s', ex.message, ex);
    else diag.error('the OpenTelemetry SDK reported: %s', typeof ex === 'string' ? ex : JSON.stringify(ex));
  });
  // Registered first at the default level, so that an OTEL_LOG_LEVEL the SDK cannot read is itself reported.
  diag.setLogger(logger, { logLevel: DiagLogLevel.INFO, suppressOverrideMessage: true });
  const raw = env.OTEL_LOG_LEVEL?.trim();
  const level = diagLogLevelFromString(raw === '' ? undefined : raw) ?? DiagLogLevel.INFO;
  if (level !== DiagLogLevel.INFO) diag.setLogger(logger, { logLevel: level, suppressOverrideMessage: true });
}
