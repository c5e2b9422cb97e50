import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag, trace } from '@opentelemetry/api';
import { loggingErrorHandler, setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/base/logger.js';
import { logOpenTelemetryDiagnostics } from '../../../src/runtime/otel-diagnostics.js';
import { startTelemetry } from '../../../src/runtime/telemetry.js';
import { failedExportSpans } from '../../../src/runtime/otlp-span-exporter.js';
import { capture } from '../../support/log-lines.js';

afterEach(() => {
  diag.disable();
  setGlobalErrorHandler(loggingErrorHandler());
});

function logged(): { log: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const { stream, lines } = capture();
  return {
    log: createLogger({ level: 'trace' }, stream),
    lines: () => lines().filter((l) => l.component === 'opentelemetry'),
  };
}

describe('the OpenTelemetry SDK diagnostics, logged', () => {
  it('writes diag reports as log lines at their level, an Error with its stack', () => {
    const { log, lines } = logged();
    logOpenTelemetryDiagnostics(log, {});
    diag.warn('value %s invalid', 'x');
    diag.error('export failed', new Error('connect ECONNREFUSED 127.0.0.1:4318'));
    diag.debug('not at the default level');
    expect(lines().map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'value x invalid'],
      ['error', 'export failed'],
    ]);
    expect((lines()[1]?.err as { stack?: string } | undefined)?.stack).toMatch(
      /ECONNREFUSED[\s\S]*otel-diagnostics\.test/,
    );
  });

  it.each([
    ['error', [['error', 'e']]],
    ['NONE', []],
    // At debug the API reports its own registration of the logger, too.
    [
      'debug',
      [
        ['debug', expect.stringMatching(/^@opentelemetry\/api: Registered a global for diag/)],
        ['warn', 'w'],
        ['error', 'e'],
        ['debug', 'd'],
      ],
    ],
    [
      ' ',
      [
        ['warn', 'w'],
        ['error', 'e'],
      ],
    ],
  ])('OTEL_LOG_LEVEL=%j sets how much is logged', (level, want) => {
    const { log, lines } = logged();
    logOpenTelemetryDiagnostics(log, { OTEL_LOG_LEVEL: level });
    diag.warn('w');
    diag.error('e');
    diag.debug('d');
    expect(lines().map((l) => [l.level, l.msg])).toEqual(want);
  });

  it('reports an OTEL_LOG_LEVEL it cannot read, naming it and the levels it knows, and logs at info', () => {
    const { log, lines } = logged();
    logOpenTelemetryDiagnostics(log, { OTEL_LOG_LEVEL: 'loud' });
    diag.info('i');
    expect(lines().map((l) => l.msg)).toEqual([
      expect.stringMatching(/Unknown log level "loud", expected one of ALL,VERBOSE,DEBUG,INFO,WARN,ERROR,NONE/),
      'i',
    ]);
  });

  it('reports OTEL_* values that start no tracing or another sampler than the one named', async () => {
    const { log, lines } = logged();
    expect(startTelemetry('test', { OTEL_TRACES_EXPORTER: 'zipkin' }, log)).toBeUndefined();
    const telemetry = startTelemetry(
      'test',
      { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'sometimes' },
      log,
    );
    await telemetry?.shutdown();
    expect(lines().map((l) => [l.level, l.msg])).toEqual([
      [
        'warn',
        'OTEL_TRACES_EXPORTER names "zipkin", an exporter this binary does not have (it has otlp, console and none): ignored',
      ],
      ['error', 'OTEL_TRACES_SAMPLER value "sometimes" invalid, defaulting to "parentbased_always_on".'],
    ]);
  });

  describe('a collector that refuses the spans', () => {
    let collector: Server | undefined;
    afterEach(async () => {
      delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      delete process.env.OTEL_BSP_SCHEDULE_DELAY;
      await new Promise((resolve) => collector?.close(resolve));
    });

    it('is logged as an error on each failed export, naming the answer', async () => {
      collector = createServer((req, res) =>
        req
          .resume()
          .on('end', () =>
            res.writeHead(400, 'Bad Request', { 'content-type': 'application/json' }).end('{"code":3,"message":"no"}'),
          ),
      );
      await new Promise<void>((resolve) => collector?.listen(0, '127.0.0.1', resolve));
      // The batch processor and the exporter read their variables from this process's environment.
      process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
      process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
      const { log, lines } = logged();
      const failedBefore = (await failedExportSpans.get()).values[0]?.value ?? 0;
      const telemetry = startTelemetry('test', process.env, log);
      try {
        trace.getTracer('t').startSpan('refused').end();
        const deadline = Date.now() + 10_000;
        // The SDK's exporter also says at info level that it will not retry; the error line is the failure.
        const errors = (): Record<string, unknown>[] => lines().filter((l) => l.level === 'error');
        while (errors().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(errors()[0]).toMatchObject({
          level: 'error',
          msg: 'the OTLP export of 1 span failed: Bad Request (HTTP 400: {"code":3,"message":"no"})',
        });
        // And counted, for the alert EndpointOperatorTraceExportFailing.
        expect((await failedExportSpans.get()).values[0]?.value).toBe(failedBefore + 1);
      } finally {
        await telemetry?.shutdown();
      }
    }, 15_000);
  });
});
