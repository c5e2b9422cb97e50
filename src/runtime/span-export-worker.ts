/**
 * The worker thread of worker-span-exporter.ts: rebuilds each batch's spans and exports them with the
 * SDK's OTLPTraceExporter, configured from the OTEL_* environment (a worker starts with a copy of the
 * process's), then reports the result. Messages are handled in order, so a flush or shutdown comes
 * after the exports sent before it, and the exporter's own flush waits for those still in flight.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type DetectedResourceAttributes } from '@opentelemetry/resources';
import { spanFromData } from './span-data.js';
import type { ExportWorkerData, ExportWorkerReply, ExportWorkerRequest } from './worker-span-exporter.js';

const data = workerData as ExportWorkerData;
const resource = resourceFromAttributes(data.resourceAttributes as DetectedResourceAttributes, data.schemaUrl === undefined ? {} : { schemaUrl: data.schemaUrl });
const exporter = new OTLPTraceExporter();

const reply = (id: number, result: ExportResult): void => {
  const message: ExportWorkerReply = result.code === ExportResultCode.SUCCESS ? { id, code: result.code } : { id, code: result.code, error: result.error?.message ?? 'span export failed' };
  parentPort?.postMessage(message);
};
const settle = (id: number, done: Promise<void>): void => {
  done.then(() => reply(id, { code: ExportResultCode.SUCCESS }), (err: unknown) => reply(id, { code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) }));
};

parentPort?.on('message', (request: ExportWorkerRequest) => {
  if (request.op === 'export') exporter.export(request.spans.map((s) => spanFromData(s, resource)), (result) => reply(request.id, result));
  else settle(request.id, request.op === 'flush' ? exporter.forceFlush() : exporter.shutdown());
});
