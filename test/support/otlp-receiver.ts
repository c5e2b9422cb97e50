/**
 * A loopback OTLP/HTTP trace receiver (POST /v1/traces) that decodes what
 * the SDK's OTLP/HTTP exporter sends: OTLP's JSON encoding
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding), ids as hex strings.
 * Anything else it is sent (protobuf, another path) is recorded as refused, so a test sees it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
interface KeyValue { key: string; value: AnyValue }

export interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? '';
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) out[kv.key] = valueOf(kv.value);
  return out;
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[]; status?: { code?: number } }> }>;
  }>;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not OTLP/JSON trace exports (content type and path). */
  readonly refused: string[] = [];
  /** Every request received, whatever it was. */
  requests = 0;
  private server: http.Server | undefined;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      this.requests++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const type = req.headers['content-type'] ?? '';
        if (req.url !== '/v1/traces' || !type.startsWith('application/json')) {
          this.refused.push(`${type} ${req.url ?? ''}`);
          res.writeHead(415).end();
          return;
        }
        this.record(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private record(body: ExportRequest): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind,
            attributes: attributesOf(s.attributes), statusCode: s.status?.code ?? 0,
          });
        }
      }
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }
}
