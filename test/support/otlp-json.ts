/**
 * OTLP's JSON encoding of traces (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): what the
 * SDK's OTLP/HTTP exporter sends and what the collector's file exporter writes, one export request per line.
 * Ids are hex strings, kinds and status codes integers, 64-bit integers strings.
 */
type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
interface KeyValue {
  key: string;
  value?: AnyValue;
}

export interface ExportedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span (the field is absent). */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** An ExportTraceServiceRequest as JSON; only the fields the tests read. */
interface TracesData {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
        status?: { code?: number };
      }>;
    }>;
  }>;
}

function valueOf(v: AnyValue | undefined): string | number | boolean {
  if (v?.stringValue !== undefined) return v.stringValue;
  if (v?.intValue !== undefined) return Number(v.intValue);
  if (v?.boolValue !== undefined) return v.boolValue;
  return v?.doubleValue ?? '';
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) out[kv.key] = valueOf(kv.value);
  return out;
}

/** The spans of one decoded OTLP/JSON traces document, each with its resource's service.name. */
export function spansOfTracesData(document: unknown): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const rs of (document as TracesData).resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          service,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          // The protobuf JSON mapping omits zero values: a missing kind is SPAN_KIND_UNSPECIFIED.
          kind: s.kind ?? 0,
          attributes: attributesOf(s.attributes),
          statusCode: s.status?.code ?? 0,
        });
      }
    }
  }
  return spans;
}
