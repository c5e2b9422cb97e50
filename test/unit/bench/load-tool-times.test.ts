/**
 * The load tool's CPU is read from the POSIX `times` its shell prints after it (test/support/load-tool.ts): dash's
 * form (Debian's sh) and bash's, after whatever the tool wrote to stderr.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { splitTimes } from '../../support/load-tool.js';

describe('splitTimes', () => {
  it("reads the children's user and system time from times' last line and keeps what came before", () => {
    const stderr = 'warning: a line\nanother\n0m0.010000s 0m0.000000s\n1m2.500000s 0m0.250000s\n';
    expect(splitTimes(stderr)).toEqual({ before: 'warning: a line\nanother', cpuSeconds: 62.75 });
    expect(splitTimes('0m0.004s 0m0.000s\n0m0.310s 0m0.020s')).toEqual({ before: '', cpuSeconds: 0.33 });
  });

  it('refuses stderr without them, quoting it', () => {
    expect(() => splitTimes('the tool crashed\n')).toThrow(/printed no times:\nthe tool crashed/);
  });

  it("reads what this machine's sh prints for a child that used the CPU", () => {
    const busy = 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo done >&2';
    const run = spawnSync('sh', ['-c', '"$@"; times >&2', 'load-tool', 'sh', '-c', busy], { encoding: 'utf8' });
    const { before, cpuSeconds } = splitTimes(run.stderr);
    expect(before).toBe('done');
    expect(cpuSeconds).toBeGreaterThan(0);
  });
});
