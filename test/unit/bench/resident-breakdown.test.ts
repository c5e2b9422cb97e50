import { describe, expect, it } from 'vitest';
import { parseSmaps } from '../../../bench/memory/resident-breakdown.js';

/** One smaps entry: the header line and its Rss line (the other fields do not matter here). */
function entry(range: string, perms: string, name: string, rssKib: number): string {
  return `${range} ${perms} 00000000 00:00 0 ${name}\nSize: 4 kB\nRss: ${rssKib} kB\nPss: ${rssKib} kB\n`;
}

describe('parseSmaps', () => {
  it("tells mapped files, glibc's brk heap and arena heaps, and the other anonymous pages apart", () => {
    const text = [
      entry('55d0a0000000-55d0a4000000', 'r-xp', '/usr/bin/node', 30_000),
      entry('55d0b0000000-55d0b1000000', 'rw-p', '[heap]', 10_000),
      // An arena heap: 64 MiB-aligned, 2 MiB read-write, the rest of its 64 MiB reserved.
      entry('7f3c00000000-7f3c00200000', 'rw-p', '', 2_000),
      entry('7f3c00200000-7f3c04000000', '---p', '', 0),
      // V8 pages: anonymous, not arena-shaped (aligned to 64 MiB but followed by nothing reserved).
      entry('7f3d00000000-7f3d00040000', 'rw-p', '', 256),
      entry('7f3e00010000-7f3e00050000', 'rw-p', '', 200),
      entry('7ffc00000000-7ffc00021000', 'rw-p', '[stack]', 100),
    ].join('');
    expect(parseSmaps(text)).toEqual({
      fileBytes: 30_000 * 1024,
      mallocBytes: 12_000 * 1024,
      mallocArenas: 1,
      otherAnonBytes: 556 * 1024,
    });
  });
});
