import { createTraceState, SpanKind, SpanStatusCode, TraceFlags, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { spanFromData, spanToData } from '../../../src/runtime/span-data.js';

const resource = resourceFromAttributes({ 'service.name': 'span-data-test', 'k8s.namespace.name': 'ns' });
const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
afterAll(() => provider.shutdown());

/** Two spans as the SDK records them: a server span continuing a remote parent with trace state, and a client child with a link and an event. */
function recordedSpans(): ReadableSpan[] {
  const tracer = provider.getTracer('endpoint-operator-test', '1.2.3');
  const remote = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: createTraceState('vendor=abc,other=1') };
  const server = tracer.startSpan('POST predict', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'endpoint_operator.retry': false, sizes: [1, 2, 3] } }, trace.setSpanContext(ROOT_CONTEXT, remote));
  const client = tracer.startSpan('POST', { kind: SpanKind.CLIENT, links: [{ context: remote, attributes: { why: 'retry' } }] }, trace.setSpan(ROOT_CONTEXT, server));
  client.addEvent('retry', { 'attempt.number': 2 });
  client.setStatus({ code: SpanStatusCode.ERROR, message: 'connection reset' });
  client.end();
  server.setAttribute('http.response.status_code', 200);
  server.end();
  return memory.getFinishedSpans();
}

describe('span data (a finished span across a worker thread and back)', () => {
  it('survives structured cloning and rebuilds spans that the OTLP exporter encodes byte for byte as the originals', () => {
    const spans = recordedSpans();
    expect(spans).toHaveLength(2);
    // structuredClone is what postMessage does to the data; a class instance or a function in it would throw or be lost.
    const rebuilt = spans.map((s) => spanFromData(structuredClone(spanToData(s)), resource));
    const encode = (list: ReadableSpan[]): string => new TextDecoder().decode(JsonTraceSerializer.serializeRequest(list));
    expect(encode(rebuilt)).toBe(encode(spans));
    const decoded = JSON.parse(encode(rebuilt)) as { resourceSpans: { scopeSpans: { scope: { name: string; version: string }; spans: { traceState?: string; parentSpanId?: string; links: { traceState?: string }[] }[] }[] }[] };
    // One resource and one scope for both spans: the transformer groups by resource identity and scope.
    expect(decoded.resourceSpans).toHaveLength(1);
    const scopeSpans = decoded.resourceSpans[0]?.scopeSpans[0];
    expect(scopeSpans?.scope).toMatchObject({ name: 'endpoint-operator-test', version: '1.2.3' });
    const [client, server] = scopeSpans?.spans ?? [];
    expect(server?.traceState).toBe('vendor=abc,other=1');
    expect(server?.parentSpanId).toBe('b7ad6b7169203331');
    expect(client?.links[0]?.traceState).toBe('vendor=abc,other=1');
  });

  it('rebuilds the span context, parent, status, events and counts as they were', () => {
    const [client] = recordedSpans().slice(-2);
    if (client === undefined) throw new Error('no span recorded');
    const span = spanFromData(structuredClone(spanToData(client)), resource);
    expect(span.spanContext()).toMatchObject({ traceId: client.spanContext().traceId, spanId: client.spanContext().spanId, traceFlags: TraceFlags.SAMPLED });
    expect(span.parentSpanContext?.spanId).toBe(client.parentSpanContext?.spanId);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'connection reset' });
    expect(span.events).toEqual(client.events);
    expect(span.links[0]?.context.traceState?.get('vendor')).toBe('abc');
    expect([span.startTime, span.endTime, span.duration, span.kind, span.ended]).toEqual([client.startTime, client.endTime, client.duration, SpanKind.CLIENT, true]);
    expect(span.resource).toBe(resource);
  });
});
