/** The process environment as the OpenTelemetry settings read it (OTEL_*), injected so tests pass their own. */
export type Environment = Readonly<Record<string, string | undefined>>;
