import { SpanKind, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CountedOtlpSpanExporter } from '../../../src/runtime/otlp-span-exporter.js';
import { SPAN_KIND } from '../../support/otlp-json.js';
import { OtlpReceiver } from '../../support/otlp-receiver.js';

const resource = resourceFromAttributes({ 'service.name': 'otlp-export-test' });
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = new OtlpReceiver();
  // OTLPTraceExporter reads its endpoint from the environment when it is made.
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${await receiver.start()}/v1/traces`;
});
afterAll(async () => {
  delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  await receiver.close();
});

describe("CountedOtlpSpanExporter (the SDK's OTLP/HTTP exporter)", () => {
  it('exports every span handed to it by the batch processor, all of them by the end of shutdown', async () => {
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new CountedOtlpSpanExporter(), { maxExportBatchSize: 7 })],
    });
    const tracer = provider.getTracer('worker-test');
    const parent = tracer.startSpan('parent', { kind: SpanKind.SERVER });
    for (let i = 0; i < 30; i++)
      tracer
        .startSpan(`child ${i}`, { kind: SpanKind.CLIENT, attributes: { i } }, trace.setSpan(ROOT_CONTEXT, parent))
        .end();
    parent.end();
    await provider.shutdown();
    const mine = receiver.spans.filter((s) => s.service === 'otlp-export-test');
    expect(mine).toHaveLength(31);
    const server = mine.find((s) => s.name === 'parent');
    expect(server?.kind).toBe(SPAN_KIND.server);
    expect(
      mine
        .filter((s) => s.parentSpanId === server?.spanId)
        .map((s) => s.attributes.i)
        .sort((a, b) => Number(a) - Number(b)),
    ).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(receiver.refused).toEqual([]);
  });
});
