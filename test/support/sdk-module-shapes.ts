/**
 * Run by test/unit/runtime/fast-module-exports.test.ts in a node started with --allow-natives-syntax:
 * which `exports` objects of the OpenTelemetry packages have dictionary-mode (slow) properties before
 * startTelemetry registers the SDK, and which after. Prints one line, `MODULES {"before":[…],"after":[…]}`
 * (paths from the package's scope on).
 */
import { createRequire } from 'node:module';
import { writeSync } from 'node:fs';
import { startTelemetry } from '../../src/runtime/telemetry.js';

const fastProperties = new Function('a', 'return %HasFastProperties(a)') as (a: object) => boolean;
const loaded = createRequire(import.meta.url).cache;

function slowSdkModules(): string[] {
  return Object.entries(loaded)
    .filter(([file, m]) => file.includes('/node_modules/@opentelemetry/') && typeof m?.exports === 'object' && m.exports !== null && !fastProperties(m.exports as object))
    .map(([file]) => file.slice(file.indexOf('@opentelemetry/')));
}

const before = slowSdkModules();
// The console exporter, with nothing exported before the process ends: only the SDK's registration matters here.
startTelemetry('sdk-module-shapes', { OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '600000' });
writeSync(1, `MODULES ${JSON.stringify({ before, after: slowSdkModules() })}\n`);
process.exit(0);
