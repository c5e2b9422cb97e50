/**
 * A SpanExporter whose HTTP I/O runs on a worker thread: the batch processor hands it a batch on the
 * main thread, which encodes it with the SDK's own OTLP/JSON serializer (the one OTLPTraceExporter
 * uses) and posts a copy of the bytes to the worker, where the SDK's OTLP/HTTP export delegate
 * sends them (span-export-worker.ts). Why: an export's HTTP exchange (connection, retries, a slow or
 * unreachable collector) then never runs on the event loop between two calls' work. Encoded here, not
 * in the worker: posting the spans themselves would clone every span object on the way.
 *
 * The batch's result is reported back when the worker's export ends, so the batch processor keeps its
 * own back-pressure (one export at a time; beyond `OTEL_BSP_MAX_QUEUE_SIZE` it drops spans). On top of
 * that, at most `maxPendingBatches` batches wait for the worker: beyond, a batch is dropped and
 * counted; a call is never blocked and never fails for tracing. One worker per exporter, started on
 * the first batch, unref'd (it never keeps the process alive).
 */
import type { Worker } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Counter } from 'prom-client';
import { metricsRegistry } from './metrics.js';
import { startModuleWorker } from './module-worker.js';

export const droppedExportSpans = new Counter({
  name: 'endpoint_operator_trace_export_dropped_spans_total',
  help: 'Finished spans not exported because the export worker thread was behind (its queue was full) or had stopped.',
  registers: [metricsRegistry],
});

export const failedExportSpans = new Counter({
  name: 'endpoint_operator_trace_export_failed_spans_total',
  help: "Finished spans lost because their OTLP export failed: the endpoint refused the batch or could not be reached within the exporter's retries, or the export worker failed.",
  registers: [metricsRegistry],
});

/** One batch as the OTLP/HTTP request body. */
export interface EncodedSpanBatch {
  readonly body: Uint8Array;
  readonly spanCount: number;
}

export type ExportWorkerRequest =
  | { readonly id: number; readonly op: 'export'; readonly body: Uint8Array; readonly spanCount: number }
  | { readonly id: number; readonly op: 'flush' | 'shutdown' };

export interface ExportWorkerReply {
  readonly id: number;
  readonly code: ExportResultCode;
  readonly error?: string;
}

const DEFAULT_MAX_PENDING_BATCHES = 16;

export class WorkerSpanExporter implements SpanExporter {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, (reply: ExportWorkerReply) => void>();
  private nextId = 0;
  private stopped = false;

  constructor(private readonly maxPendingBatches = DEFAULT_MAX_PENDING_BATCHES) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (spans.length === 0) return resultCallback({ code: ExportResultCode.SUCCESS });
    if (this.stopped || this.pending.size >= this.maxPendingBatches) {
      droppedExportSpans.inc(spans.length);
      return resultCallback({
        code: ExportResultCode.FAILED,
        error: new Error(
          this.stopped
            ? 'the span exporter is shut down'
            : `${this.pending.size} span batches already wait for the export worker; ${spans.length} spans dropped`,
        ),
      });
    }
    const encoded = JsonTraceSerializer.serializeRequest(spans);
    const failed = (error: Error): void => {
      failedExportSpans.inc(spans.length);
      resultCallback({ code: ExportResultCode.FAILED, error });
    };
    if (encoded === undefined)
      return failed(new Error(`the OTLP/JSON serializer could not encode ${spans.length} spans`));
    const worker = this.worker ?? this.start();
    this.send(worker, { op: 'export', body: encoded, spanCount: spans.length }).then(
      (reply) =>
        reply.code === ExportResultCode.SUCCESS
          ? resultCallback({ code: reply.code })
          : failed(
              new Error(
                `the OTLP export of ${spans.length} span${spans.length === 1 ? '' : 's'} failed: ${reply.error ?? 'the exporter gave no reason'}`,
              ),
            ),
      (err: unknown) => failed(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /** Waits for the batches sent so far and the worker's exporter's own pending sends. */
  async forceFlush(): Promise<void> {
    if (this.worker !== undefined) await this.send(this.worker, { op: 'flush' });
  }

  /** Ends after every batch handed over so far is exported (or failed), then stops the worker. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const worker = this.worker;
    if (worker === undefined) return;
    try {
      await this.send(worker, { op: 'shutdown' });
    } finally {
      await worker.terminate();
    }
  }

  private start(): Worker {
    const worker = startModuleWorker(import.meta.url, 'span-export-worker');
    worker.unref();
    worker.on('message', (reply: ExportWorkerReply) => {
      const settle = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      settle?.(reply);
    });
    // A worker that fails or exits fails what it had; the next batch starts a new one.
    const fail = (why: string): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, settle] of this.pending) {
        this.pending.delete(id);
        settle({ id, code: ExportResultCode.FAILED, error: why });
      }
    };
    worker.on('error', (err) => fail(`the export worker failed: ${err.message}`));
    worker.on('exit', (code) => fail(`the export worker exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private send(worker: Worker, message: DistributiveOmit<ExportWorkerRequest, 'id'>): Promise<ExportWorkerReply> {
    const id = this.nextId++;
    const request = { ...message, id } as ExportWorkerRequest;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      // Copied, not transferred: one memcpy per batch, and the encoded bytes stay valid here.
      worker.postMessage(request);
    });
  }
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
