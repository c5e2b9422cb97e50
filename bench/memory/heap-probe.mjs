// Loaded into the operator under test by the B3 memory benchmark only (node --expose-gc --import
// this file): on SIGUSR2 it runs a full, synchronous mark-compact GC and writes the heap figures
// before and after it to EO_BENCH_HEAP_PROBE_FILE. The heap left after a full GC is the live set,
// so a series of these shows a leak without the sawtooth of garbage waiting for collection. V8's
// per-space figures, before and after, say which space holds the pages committed beyond the live set.
// Plain JavaScript, so the measured process loads no TypeScript loader.
import { renameSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.EO_BENCH_HEAP_PROBE_FILE;
const gc = globalThis.gc;
if (file && typeof gc === 'function') {
  let seq = 0;
  const write = (figures) => {
    writeFileSync(`${file}.tmp`, JSON.stringify({ seq, at: Date.now(), ...figures }));
    renameSync(`${file}.tmp`, file);
  };
  process.on('SIGUSR2', () => {
    const before = process.memoryUsage();
    const spacesBefore = getHeapSpaceStatistics();
    gc();
    seq++;
    write({ before, after: process.memoryUsage(), spacesBefore, spacesAfter: getHeapSpaceStatistics() });
  });
  // Tells the benchmark the handler is installed: without it SIGUSR2 would end the process.
  write({});
}
