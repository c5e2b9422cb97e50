import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { SpanKind, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { droppedExportSpans, WorkerSpanExporter } from '../../../src/runtime/worker-span-exporter.js';
import { SPAN_KIND } from '../../support/otlp-json.js';
import { OtlpReceiver } from '../../support/otlp-receiver.js';

const resource = resourceFromAttributes({ 'service.name': 'worker-export-test' });
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = new OtlpReceiver();
  // The worker's OTLPTraceExporter reads the environment the worker starts with, a copy of this process's.
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${await receiver.start()}/v1/traces`;
});
afterAll(async () => {
  delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  await receiver.close();
});

describe('WorkerSpanExporter (OTLP/HTTP export on a worker thread)', () => {
  it('exports every span handed to it by the batch processor, all of them by the end of shutdown', async () => {
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new WorkerSpanExporter(), { maxExportBatchSize: 7 })],
    });
    const tracer = provider.getTracer('worker-test');
    const parent = tracer.startSpan('parent', { kind: SpanKind.SERVER });
    for (let i = 0; i < 30; i++)
      tracer
        .startSpan(`child ${i}`, { kind: SpanKind.CLIENT, attributes: { i } }, trace.setSpan(ROOT_CONTEXT, parent))
        .end();
    parent.end();
    await provider.shutdown();
    const mine = receiver.spans.filter((s) => s.service === 'worker-export-test');
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

  it('drops and counts a batch when the worker is behind, never waiting for it', async () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const span = provider.getTracer('worker-test').startSpan('dropped');
    span.end();
    const exporter = new WorkerSpanExporter(1);
    const results: ExportResult[] = [];
    const dropped = async (): Promise<number> => (await droppedExportSpans.get()).values[0]?.value ?? 0;
    const before = await dropped();
    exporter.export(memory.getFinishedSpans(), (r) => results.push(r));
    exporter.export(memory.getFinishedSpans(), (r) => results.push(r));
    // The second batch is refused at once, while the first still waits for the worker.
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.FAILED]);
    expect(results[0]?.error?.message).toMatch(/1 span batches already wait for the export worker; 1 spans dropped/);
    expect(await dropped()).toBe(before + 1);
    await exporter.shutdown();
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.FAILED, ExportResultCode.SUCCESS]);
    await provider.shutdown();
  });

  it('starts no worker when it is never handed a span', async () => {
    const exporter = new WorkerSpanExporter();
    await exporter.forceFlush();
    await exporter.shutdown();
    const results: ExportResult[] = [];
    exporter.export([], (r) => results.push(r));
    expect(results).toEqual([{ code: ExportResultCode.SUCCESS }]);
  });
});

/**
 * The exporter's modules as plain JavaScript (TypeScript's transpileModule) in a directory under
 * node_modules, so that a child node runs them without tsx: tsx's own start-up detaches ArrayBuffers,
 * which would hide the exporter's.
 */
function plainExporterModules(): string {
  const dir = fileURLToPath(new URL('../../../node_modules/.cache/eo-export-protector/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  // Laid out as in src/, so their relative imports resolve.
  const modules = [
    'runtime/worker-span-exporter',
    'runtime/span-export-worker',
    'runtime/metrics',
    'runtime/module-worker',
  ];
  for (const name of [...modules, 'metrics/registry']) {
    const source = readFileSync(fileURLToPath(new URL(`../../../src/${name}.ts`, import.meta.url)), 'utf8');
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(
      join(dir, `${name}.js`),
      ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } })
        .outputText,
    );
  }
  // One batch, to the receiver this file starts (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, inherited by the child).
  writeFileSync(
    join(dir, 'check.mjs'),
    [
      "import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';",
      "import { WorkerSpanExporter } from './runtime/worker-span-exporter.js';",
      'const memory = new InMemorySpanExporter();',
      'const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });',
      "for (let i = 0; i < 20; i++) provider.getTracer('protector').startSpan(`protector span ${i}`).end();",
      "console.log('BEFORE');",
      'const exporter = new WorkerSpanExporter();',
      'const code = await new Promise((resolve) => exporter.export(memory.getFinishedSpans(), (r) => resolve(r.code)));',
      'await exporter.shutdown();',
      'console.log(`EXPORTED ${code}`);',
    ].join('\n'),
  );
  return join(dir, 'check.mjs');
}

describe('WorkerSpanExporter and V8', () => {
  it('hands a batch to its worker without detaching an ArrayBuffer of the serving isolate', async () => {
    // V8 prints the invalidation of its ArrayBufferDetaching protector, which the first detached ArrayBuffer of
    // an isolate causes (a transfer detaches): worker-span-exporter.ts says what that costs the serving path.
    // Not execFileSync: this process's receiver must answer the child's export meanwhile.
    const { stdout: out } = await promisify(execFile)(
      process.execPath,
      ['--trace-protector-invalidation', plainExporterModules()],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(out).toMatch(/^BEFORE$/m);
    expect(out).toMatch(/^EXPORTED 0$/m);
    expect(receiver.spans.filter((s) => s.name.startsWith('protector span '))).toHaveLength(20);
    expect(out).not.toMatch(/ArrayBufferDetaching/);
  }, 60_000);
});
