/**
 * The SDK's own OTLP/HTTP trace exporter (OTLPTraceExporter: JSON, its transport, retries and bounded
 * concurrency, configured by the SDK from the OTEL_EXPORTER_OTLP_* environment), with what an operator
 * needs on top of it: the spans of a failed export are counted, for the alert
 * EndpointOperatorTraceExportFailing, and the failure the SDK reports names the HTTP status and the start
 * of the body the OTLP endpoint answered (the SDK's own error says only "Bad Request").
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Counter } from 'prom-client';
import { metricsRegistry } from '../base/metrics.js';

export const failedExportSpans = new Counter({
  name: 'endpoint_operator_trace_export_failed_spans_total',
  help: "Finished spans lost because their OTLP export failed: the endpoint refused the batch or could not be reached within the exporter's retries.",
  registers: [metricsRegistry],
});

/** What went wrong, for the log: the exporter's message, with the HTTP status and the start of the body the OTLP endpoint answered with. */
function describeFailure(error: Error | undefined): string {
  if (error === undefined) return 'the exporter gave no reason';
  const { code, data } = error as { code?: unknown; data?: unknown };
  if (typeof code !== 'number') return error.message;
  return `${error.message} (HTTP ${code}${typeof data === 'string' && data !== '' ? `: ${data.slice(0, 300)}` : ''})`;
}

export class CountedOtlpSpanExporter implements SpanExporter {
  private readonly exporter = new OTLPTraceExporter();

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) return resultCallback(result);
      failedExportSpans.inc(spans.length);
      resultCallback({
        code: ExportResultCode.FAILED,
        error: new Error(
          `the OTLP export of ${spans.length} span${spans.length === 1 ? '' : 's'} failed: ${describeFailure(result.error)}`,
        ),
      });
    });
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }
}
