/**
 * Fast properties for the `exports` objects of CommonJS packages whose functions run per span.
 *
 * The OpenTelemetry packages run here as their CommonJS builds (none has an `exports` map with an
 * `import` condition, so Node never loads their ESM ones). TypeScript emits a package's index as
 * `exports.a = exports.b = … = void 0` followed by one `Object.defineProperty(exports, 'a', { get })`
 * per re-export. Turning a data property into an accessor makes V8 give the object dictionary
 * ("slow") properties, and an optimised function cannot inline a load from a dictionary object: every
 * `core_1.hrTime(…)`, `api.trace.getSpan(…)` in the SDK's per-span code (Tracer.startSpan,
 * SpanImpl, its `_getTime` and `end`, the OTLP transformer) was a call to V8's generic LoadIC, a
 * dictionary lookup, then an uninlined getter call. perf of the gateway at sampler 1.0 (B6 tracing):
 * ~2.5 µs per call in `Builtins_LoadIC` and those getters, called from the SDK.
 *
 * V8 gives an object fast properties again when it serves as the prototype of a property load that
 * goes through an inline cache (`JSObject::MakePrototypesFast`, which Babel's `to-fast-properties` and
 * Bluebird relied on). Nothing observable changes: the same properties, getters, order and prototype.
 * A unit test checks on this Node that the SDK's objects start slow and end fast.
 */
import { createRequire } from 'node:module';

const moduleCache = createRequire(import.meta.url).cache;

/** A load of a property no object has, run often enough to get an inline cache, through `receiver`. */
function probe(receiver: Readonly<Record<string, unknown>>): unknown {
  return receiver['__endpointOperatorFastPropertiesProbe'];
}

function useAsPrototype(o: object): void {
  const receiver = Object.create(o) as Readonly<Record<string, unknown>>;
  // V8 allocates a function's feedback (its inline caches) after a few calls; the loads after that miss
  // once for this receiver's map, and the miss makes the prototype chain fast.
  for (let i = 0; i < 16; i++) probe(receiver);
}

/**
 * Makes fast the `exports` of every CommonJS module loaded so far whose file path (with `/` separators)
 * contains `pathPart` (e.g. `/node_modules/@opentelemetry/`); returns how many objects it went through.
 */
export function fastModuleExports(pathPart: string): number {
  let count = 0;
  for (const [file, loaded] of Object.entries(moduleCache)) {
    const exports: unknown = loaded?.exports;
    if (!file.replaceAll('\\', '/').includes(pathPart) || typeof exports !== 'object' || exports === null) continue;
    useAsPrototype(exports);
    count++;
  }
  return count;
}
