/**
 * A SpanExporter that exports on a worker thread: the batch processor hands it a batch on the main
 * thread, the spans go to the worker as plain data (span-data.ts), and the worker runs the SDK's own
 * OTLPTraceExporter (span-export-worker.ts). Why: with the OTLP exporter in the gateway's own V8
 * isolate, sampling 1 % of calls cost every call about 20 µs of main-thread CPU (B6 tracing), spread
 * thinly over Node's HTTP server, streams and V8's generic property access; the exporter's HTTP client
 * shares those internals with the serving path. In its own isolate it shares none of them.
 *
 * The batch's result is reported back when the worker's export ends, so the batch processor keeps its
 * own back-pressure (one export at a time; beyond `OTEL_BSP_MAX_QUEUE_SIZE` it drops spans). On top of
 * that, at most `maxPendingBatches` batches wait for the worker: beyond, a batch is dropped and
 * counted; a call is never blocked and never fails for tracing. One worker per exporter, started on
 * the first batch, unref'd (it never keeps the process alive).
 */
import type { Worker } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Counter } from 'prom-client';
import { metricsRegistry } from './metrics.js';
import { startModuleWorker } from './module-worker.js';
import { spanToData, type SpanData } from './span-data.js';

export const droppedExportSpans = new Counter({
  name: 'endpoint_operator_trace_export_dropped_spans_total',
  help: 'Finished spans not exported because the export worker thread was behind (its queue was full) or had stopped.',
  registers: [metricsRegistry],
});

/** What the worker is started with: the resource of every span (one per process). */
export interface ExportWorkerData {
  readonly resourceAttributes: Record<string, unknown>;
  readonly schemaUrl?: string;
}

export type ExportWorkerRequest =
  | { readonly id: number; readonly op: 'export'; readonly spans: SpanData[] }
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
    const first = spans[0];
    if (first === undefined) return resultCallback({ code: ExportResultCode.SUCCESS });
    if (this.stopped || this.pending.size >= this.maxPendingBatches) {
      droppedExportSpans.inc(spans.length);
      return resultCallback({ code: ExportResultCode.FAILED, error: new Error(this.stopped ? 'the span exporter is shut down' : `${this.pending.size} span batches already wait for the export worker; ${spans.length} spans dropped`) });
    }
    const worker = this.worker ?? this.start(first.resource);
    this.send(worker, 'export', spans.map(spanToData)).then(
      (reply) => resultCallback(reply.code === ExportResultCode.SUCCESS ? { code: reply.code } : { code: reply.code, error: new Error(reply.error ?? 'span export failed') }),
      (err: unknown) => resultCallback({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) }),
    );
  }

  /** Waits for the batches sent so far and the worker's exporter's own pending sends. */
  async forceFlush(): Promise<void> {
    if (this.worker !== undefined) await this.send(this.worker, 'flush');
  }

  /** Ends after every batch handed over so far is exported (or failed), then stops the worker. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const worker = this.worker;
    if (worker === undefined) return;
    try {
      await this.send(worker, 'shutdown');
    } finally {
      await worker.terminate();
    }
  }

  private start(resource: Resource): Worker {
    const workerData: ExportWorkerData = { resourceAttributes: { ...resource.attributes }, ...(resource.schemaUrl === undefined ? {} : { schemaUrl: resource.schemaUrl }) };
    const worker = startModuleWorker(import.meta.url, 'span-export-worker', { workerData });
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

  private send(worker: Worker, op: 'export' | 'flush' | 'shutdown', spans?: SpanData[]): Promise<ExportWorkerReply> {
    const id = this.nextId++;
    const request: ExportWorkerRequest = op === 'export' ? { id, op, spans: spans ?? [] } : { id, op };
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage(request);
    });
  }
}
