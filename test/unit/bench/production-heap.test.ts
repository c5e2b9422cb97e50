import { execFileSync } from 'node:child_process';
import { totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { memoryQuantityBytes, productionHeapFlags, v8HeapForMemory } from '../../../bench/memory/production-heap.js';

describe('the production heap the memory benchmark gives the operator', () => {
  it('reads Kubernetes memory quantities', () => {
    expect(memoryQuantityBytes('256Mi')).toBe(256 * 2 ** 20);
    expect(memoryQuantityBytes('1Gi')).toBe(2 ** 30);
    expect(memoryQuantityBytes('512M')).toBe(512e6);
    expect(memoryQuantityBytes('1e9')).toBe(1e9);
    expect(() => memoryQuantityBytes('lots')).toThrow('not a memory quantity: lots');
  });

  it("gives a pod with the chart's 256Mi limit a 256 MB old generation and 1 MB semi-spaces", () => {
    expect(v8HeapForMemory(256 * 2 ** 20)).toEqual({ oldSpaceMiB: 256, semiSpaceMiB: 1 });
    expect(productionHeapFlags('256Mi')).toEqual(['--max-old-space-size=256', '--max-semi-space-size=1']);
    // The rows of V8's own HeapSizeFromPhysicalMemory test (x64 without pointer compression).
    expect(v8HeapForMemory(512 * 2 ** 20)).toEqual({ oldSpaceMiB: 256, semiSpaceMiB: 1 });
    expect(v8HeapForMemory(2 ** 30)).toEqual({ oldSpaceMiB: 512, semiSpaceMiB: 4 });
    expect(v8HeapForMemory(2 * 2 ** 30)).toEqual({ oldSpaceMiB: 1024, semiSpaceMiB: 8 });
    expect(v8HeapForMemory(8 * 2 ** 30)).toEqual({ oldSpaceMiB: 2048, semiSpaceMiB: 16 });
    expect(v8HeapForMemory(64 * 2 ** 30)).toEqual({ oldSpaceMiB: 4096, semiSpaceMiB: 16 });
  });

  it('agrees with the heap limit this very Node picks for this machine', () => {
    const constrained = process.constrainedMemory();
    const memory = constrained > 0 && constrained < 2 ** 60 ? Math.min(constrained, totalmem()) : totalmem();
    const { oldSpaceMiB, semiSpaceMiB } = v8HeapForMemory(memory);
    // A fresh process without NODE_OPTIONS: its limit is V8's old generation plus a young generation of three semi-spaces.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS'));
    const limit = Number(
      execFileSync(process.execPath, ['-p', 'require("v8").getHeapStatistics().heap_size_limit'], {
        env,
        encoding: 'utf8',
      }),
    );
    expect(limit / 2 ** 20).toBe(oldSpaceMiB + 3 * semiSpaceMiB);
  });
});
