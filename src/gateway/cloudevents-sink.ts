/**
 * Sampled prediction calls (`predictRequestResponseLoggingConfig`) as CloudEvents 1.0 in HTTP binary
 * mode (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/bindings/http-protocol-binding.md),
 * the way KServe's payload logger sends them (pkg/logger/worker.go), so a KServe logging pipeline (a
 * Knative broker, any HTTP collector) takes them unchanged: one event of type
 * `org.kubeflow.serving.inference.request` and one of `.response`, sharing one `ce-id`; the body is
 * the payload with its own content type; KServe's extensions `inferenceservicename` (the
 * PredictionEndpoint's name), `namespace`, `component` (`predictor`, or `explainer` for :explain) and
 * `endpoint` (KServe's served variant: here the deployed model id), plus `deployedmodel` and
 * `predictionendpoint` (the endpoint's resource name) of our own.
 *
 * A call only enqueues (O(1), never waits): events wait in a queue bounded in count and bytes, and one
 * sender drains it in batches of concurrent POSTs, each with a deadline. A slow or dead sink
 * therefore never slows or fails a call; what does not fit, or cannot be delivered, is dropped and
 * counted in `endpoint_operator_gateway_request_log_events_dropped_total{reason}`.
 */
import { randomUUID } from 'node:crypto';
import { Counter } from 'prom-client';
import { Agent, request } from 'undici';
import { metricsRegistry } from '../base/metrics.js';
import type { Logger } from '../base/logger.js';
import type { PredictionRecord } from './prediction/record.js';

export const CE_REQUEST_TYPE = 'org.kubeflow.serving.inference.request';
export const CE_RESPONSE_TYPE = 'org.kubeflow.serving.inference.response';

const eventsSent = new Counter({
  name: 'endpoint_operator_gateway_request_log_events_sent_total',
  help: 'Request/response CloudEvents delivered to the --request-log-sink (answered 2xx).',
  registers: [metricsRegistry],
});

export const eventsDropped = new Counter({
  name: 'endpoint_operator_gateway_request_log_events_dropped_total',
  help: 'Request/response CloudEvents not delivered to the --request-log-sink, by reason: queue_full (the sink is slower than the sampled calls), send_failed (no connection, a timeout or a non-2xx answer).',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});
for (const reason of ['queue_full', 'send_failed']) eventsDropped.inc({ reason }, 0);

export interface CloudEventSinkOptions {
  readonly url: string;
  /** Most events waiting; default 1000. */
  readonly maxQueuedEvents?: number;
  /** Most payload bytes waiting; default 16 MiB. */
  readonly maxQueuedBytes?: number;
  /** Events sent concurrently per round; default 16. */
  readonly batchSize?: number;
  /** Deadline of one delivery; default 5 s. */
  readonly timeoutMs?: number;
  readonly log: Logger;
}

interface OutgoingEvent {
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

function bodyOf(payload: Buffer | string | undefined): Buffer {
  if (payload === undefined) return Buffer.alloc(0);
  return typeof payload === 'string' ? Buffer.from(payload) : payload;
}

/** The two events of one call: request and response, one `ce-id`. Pure (exported for unit tests). */
export function callEvents(record: PredictionRecord, id: string, time: string): [OutgoingEvent, OutgoingEvent] {
  const common: Record<string, string> = {
    'ce-specversion': '1.0',
    'ce-id': id,
    'ce-source': `/v1/${record.resourceName}:${record.method}`,
    'ce-time': time,
    'ce-inferenceservicename': record.endpoint,
    'ce-namespace': record.namespace,
    'ce-component': record.method === 'explain' ? 'explainer' : 'predictor',
    'ce-endpoint': record.deployedModelId ?? '',
    'ce-deployedmodel': record.deployedModelId ?? '',
    'ce-predictionendpoint': record.resourceName,
  };
  return [
    {
      headers: {
        ...common,
        'ce-type': CE_REQUEST_TYPE,
        'content-type': record.requestContentType ?? 'application/json',
      },
      body: bodyOf(record.request),
    },
    {
      headers: {
        ...common,
        'ce-type': CE_RESPONSE_TYPE,
        'content-type': record.responseContentType ?? 'application/json',
      },
      body: bodyOf(record.response),
    },
  ];
}

export class CloudEventSink {
  private readonly queue: OutgoingEvent[] = [];
  private queuedBytes = 0;
  private draining: Promise<void> | undefined;
  private closed = false;
  private readonly agent: Agent;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private lastFailureLog = 0;

  constructor(private readonly options: CloudEventSinkOptions) {
    this.maxEvents = options.maxQueuedEvents ?? 1000;
    this.maxBytes = options.maxQueuedBytes ?? 16 * 1024 * 1024;
    this.batchSize = options.batchSize ?? 16;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.agent = new Agent({
      connections: this.batchSize,
      connect: { timeout: this.timeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  /** Queues the call's two events, or drops both (counted) when they do not fit. Never waits. */
  enqueue(record: PredictionRecord): void {
    if (this.closed) return;
    const events = callEvents(record, randomUUID(), new Date().toISOString());
    const bytes = events[0].body.length + events[1].body.length;
    if (this.queue.length + 2 > this.maxEvents || this.queuedBytes + bytes > this.maxBytes) {
      eventsDropped.inc({ reason: 'queue_full' }, 2);
      return;
    }
    this.queue.push(...events);
    this.queuedBytes += bytes;
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Events waiting now (tests). */
  get queued(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const batch = this.queue.splice(0, this.batchSize);
      for (const e of batch) this.queuedBytes -= e.body.length;
      await Promise.all(batch.map((e) => this.send(e)));
    }
  }

  private async send(event: OutgoingEvent): Promise<void> {
    try {
      const res = await request(this.options.url, {
        method: 'POST',
        headers: event.headers,
        body: event.body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        eventsSent.inc();
        return;
      }
      this.failed(`the sink answered ${res.statusCode}`);
    } catch (err) {
      this.failed((err as Error).message);
    }
  }

  private failed(why: string): void {
    eventsDropped.inc({ reason: 'send_failed' });
    // One line a minute at most: a dead sink must not flood the gateway's log.
    const now = Date.now();
    if (now - this.lastFailureLog >= 60_000) {
      this.lastFailureLog = now;
      this.options.log.warn(
        { sink: this.options.url, err: why },
        'request log event not delivered (counted in endpoint_operator_gateway_request_log_events_dropped_total)',
      );
    }
  }

  /** Stops taking events, waits for the batch in flight (bounded by its deadline), drops what is left. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
    this.queue.length = 0;
    await this.agent.close();
  }
}
