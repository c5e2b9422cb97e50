/**
 * Request/response logging (`spec.predictRequestResponseLoggingConfig`): with `enabled`, a
 * `samplingRate` fraction of calls is written as one structured pino record (`msg: "prediction"`)
 * with the endpoint, deployed model, method, HTTP code, latency, and the request and response bodies
 * as text truncated to `payloadLimitBytes` (default 16 KiB; `requestTruncated`/`responseTruncated`
 * say when). `bigqueryDestination` is kept in the spec and not written: the records go to the
 * gateway's log stream, from where a log pipeline can load them. A cap of records per second
 * protects that stream from a high sampling rate under load (dropped samples are counted in the next
 * record's `droppedSamples`). With a sink (`--request-log-sink`), every sampled call is also sent
 * there as a pair of KServe-compatible CloudEvents (cloudevents-sink.ts), whatever the log cap.
 */
import type { Logger } from '../base/logger.js';
import type { CloudEventSink } from './cloudevents-sink.js';
import type { PredictionRecord } from './prediction/record.js';

export interface RequestLogOptions {
  readonly payloadLimitBytes: number;
  readonly maxRecordsPerSecond: number;
  readonly random?: () => number;
  readonly now?: () => number;
  readonly sink?: CloudEventSink | undefined;
}

/** The first `limit` bytes of a body as UTF-8 text (a cut inside a character drops that character). */
export function truncateBody(body: Buffer | string | undefined, limit: number): { text: string; truncated: boolean } {
  if (body === undefined) return { text: '', truncated: false };
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  if (buf.length <= limit) return { text: buf.toString('utf8'), truncated: false };
  return {
    text: buf
      .subarray(0, limit)
      .toString('utf8')
      .replace(/\uFFFD+$/, ''),
    truncated: true,
  };
}

export class RequestLogger {
  private windowStart = 0;
  private inWindow = 0;
  private dropped = 0;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(
    private readonly log: Logger,
    private readonly options: RequestLogOptions,
  ) {
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  /** Whether this call is sampled (decided before the answer so the body can be kept). */
  sample(config: { enabled: boolean; samplingRate: number }): boolean {
    return config.enabled && config.samplingRate > 0 && this.random() < config.samplingRate;
  }

  write(record: PredictionRecord): void {
    this.options.sink?.enqueue(record);
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.options.maxRecordsPerSecond) {
      this.dropped++;
      return;
    }
    this.inWindow++;
    const request = truncateBody(record.request, this.options.payloadLimitBytes);
    const response = truncateBody(record.response, this.options.payloadLimitBytes);
    const dropped = this.dropped;
    this.dropped = 0;
    this.log.info(
      {
        namespace: record.namespace,
        endpoint: record.endpoint,
        endpointName: record.resourceName,
        deployedModelId: record.deployedModelId,
        method: record.method,
        code: record.code,
        latencyMs: record.latencyMs,
        request: request.text,
        ...(request.truncated ? { requestTruncated: true } : {}),
        response: response.text,
        ...(response.truncated ? { responseTruncated: true } : {}),
        ...(dropped > 0 ? { droppedSamples: dropped } : {}),
      },
      'prediction',
    );
  }

  async close(): Promise<void> {
    await this.options.sink?.close();
  }
}
