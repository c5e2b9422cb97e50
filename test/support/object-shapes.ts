/**
 * Run by test/unit/gateway/object-shapes.test.ts in a node started with --allow-natives-syntax: whether
 * objects the gateway makes on every call keep one hidden class (V8 "map") from call to call. A map
 * made anew per call makes every property load from such objects miss its inline cache, and the maps
 * are garbage to collect (B6 tracing: ~14 µs per call at sampler 0.01 from the attempt's headers alone).
 * Prints one JSON line: for each kind of object, how many of 2,000 consecutive ones had a map other
 * than the one before, and whether the last has fast (not dictionary-mode) properties.
 */
import { writeSync } from 'node:fs';
import { startTelemetry } from '../../src/runtime/telemetry.js';
import { GatewayTracing } from '../../src/gateway/tracing.js';
import { answerOf } from '../../src/gateway/upstream.js';

const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const fastProperties = new Function('a', 'return %HasFastProperties(a)') as (a: object) => boolean;

function shapes(make: (i: number) => object): { newMaps: number; fast: boolean } {
  let previous: object | undefined;
  let newMaps = 0;
  for (let i = 0; i < 2000; i++) {
    const o = make(i);
    if (previous !== undefined && !sameMap(previous, o)) newMaps++;
    previous = o;
  }
  return { newMaps, fast: previous !== undefined && fastProperties(previous) };
}

const ratio = process.argv[2] ?? '0';
const env = { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio, OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_QUEUE_SIZE: '100000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100000' };
Object.assign(process.env, env);
const telemetry = startTelemetry('object-shapes', env);
const tracing = new GatewayTracing();
const target = { origin: 'http://127.0.0.1:9000', basePath: '' };
const incoming = { 'content-type': 'application/json', host: 'gateway', 'content-length': '120' };
const attemptHeaders = shapes(() => {
  const call = tracing.startCall(incoming);
  if (call === undefined) throw new Error('tracing is off');
  const attempt = call.attempt(target, { 'content-type': 'application/json' }, false);
  attempt.end(200);
  return attempt.headers;
});
const answers = shapes((i) => answerOf(200, {}, [Buffer.from(`{"predictions":[${i}]}`)], 20, target, false));
writeSync(1, `\nSHAPES ${JSON.stringify({ attemptHeaders, answers })}\n`);
// No export before this exit (queue and batch larger than the spans, a 10 min delay): stdout holds only the figures.
process.exit(telemetry === undefined ? 1 : 0);
