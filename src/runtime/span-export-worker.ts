/**
 * The worker thread of worker-span-exporter.ts: POSTs the OTLP/JSON bytes encoded on the main thread
 * with the SDK's own OTLP/HTTP export delegate (its node-http transport, retries and bounded
 * concurrency), configured from the OTEL_EXPORTER_OTLP_* environment as OTLPTraceExporter configures
 * it (a worker starts with a copy of the process's environment). Messages are handled in order, so a
 * flush or shutdown comes after the exports sent before it, and the delegate's own flush waits for
 * those still in flight.
 */
import { parentPort } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import {
  JsonTraceSerializer,
  type IExportTraceServiceResponse,
  type ISerializer,
} from '@opentelemetry/otlp-transformer';
import type { EncodedSpanBatch, ExportWorkerReply, ExportWorkerRequest } from './worker-span-exporter.js';

// The bytes are already the request body; the response is the SDK's to read (partial success).
const encodedBatchSerializer: ISerializer<EncodedSpanBatch, IExportTraceServiceResponse> = {
  serializeRequest: (batch) => batch.body,
  deserializeResponse: (data) => JsonTraceSerializer.deserializeResponse(data),
};

// The same options, component type and metrics helper shape as OTLPTraceExporter (exporter-trace-otlp-http).
const exporter = new OTLPExporterBase<EncodedSpanBatch>(
  createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' }),
    encodedBatchSerializer,
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spanCount },
    undefined,
  ),
);

/** What went wrong, for the log: the exporter's message, with the HTTP status and the start of the body the OTLP endpoint answered with. */
function describeFailure(error: Error | undefined): string {
  if (error === undefined) return 'the exporter gave no reason';
  const { code, data } = error as { code?: unknown; data?: unknown };
  if (typeof code !== 'number') return error.message;
  return `${error.message} (HTTP ${code}${typeof data === 'string' && data !== '' ? `: ${data.slice(0, 300)}` : ''})`;
}

const reply = (id: number, result: ExportResult): void => {
  const message: ExportWorkerReply =
    result.code === ExportResultCode.SUCCESS
      ? { id, code: result.code }
      : { id, code: result.code, error: describeFailure(result.error) };
  parentPort?.postMessage(message);
};
const settle = (id: number, done: Promise<void>): void => {
  done.then(
    () => reply(id, { code: ExportResultCode.SUCCESS }),
    (err: unknown) =>
      reply(id, { code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) }),
  );
};

parentPort?.on('message', (request: ExportWorkerRequest) => {
  if (request.op === 'export')
    exporter.export({ body: request.body, spanCount: request.spanCount }, (result) => reply(request.id, result));
  else settle(request.id, request.op === 'flush' ? exporter.forceFlush() : exporter.shutdown());
});
