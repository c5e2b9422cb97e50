/**
 * Structured logging: pino, one JSON line per event. Child loggers carry the object being
 * worked on (`controller`, `kind`, `namespace`, `name`) so a reconcile's lines can be grepped.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

export interface ObjectLogContext {
  controller?: string;
  kind?: string;
  namespace?: string;
  name?: string;
}

export function createLogger(options: LoggerOptions = {}, destination?: pino.DestinationStream): Logger {
  const base: LoggerOptions = {
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'endpoint-operator' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Secrets never reach a log line even if a caller logs a whole request or object.
    redact: {
      paths: [
        'password',
        '*.password',
        'token',
        '*.token',
        'authorization',
        '*.authorization',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
    formatters: { level: (label) => ({ level: label }) },
    ...options,
  };
  return destination ? pino(base, destination) : pino(base);
}

/** A silent logger for tests and libraries used without a configured one. */
export const silentLogger: Logger = pino({ level: 'silent' });

export function objectLogger(parent: Logger, ctx: ObjectLogContext): Logger {
  const bindings: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx)) if (v !== undefined) bindings[k] = v;
  return parent.child(bindings);
}
