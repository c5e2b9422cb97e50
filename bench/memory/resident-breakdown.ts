/**
 * Where a process's resident memory is, from /proc/<pid>/smaps: pages of mapped files (the node binary's code,
 * shared libraries), glibc malloc's heaps (the brk `[heap]` and the 64 MiB-aligned heaps of its per-thread
 * arenas: what native code, Buffers and OpenSSL allocate) and the remaining anonymous mappings (V8's heap pages
 * and code space, thread stacks). B3 reads it beside V8's own figures to tell heap growth from off-heap growth.
 */
import { readFileSync } from 'node:fs';

export interface ResidentBreakdown {
  readonly fileBytes: number;
  readonly mallocBytes: number;
  readonly mallocArenas: number;
  readonly otherAnonBytes: number;
}

/** glibc's HEAP_MAX_SIZE on 64-bit: each non-main arena heap is a mapping of this size, aligned to it. */
const ARENA_HEAP = 64 * 2 ** 20;

interface Mapping {
  readonly start: bigint;
  readonly end: bigint;
  readonly perms: string;
  readonly name: string;
  rssBytes: number;
}

export function parseSmaps(text: string): ResidentBreakdown {
  const maps: Mapping[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      maps.push({
        start: BigInt(`0x${head[1] ?? '0'}`),
        end: BigInt(`0x${head[2] ?? '0'}`),
        perms: head[3] ?? '',
        name: (head[4] ?? '').trim(),
        rssBytes: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    const last = maps.at(-1);
    if (rss && last) last.rssBytes = Number(rss[1]) * 1024;
  }
  let fileBytes = 0;
  let mallocBytes = 0;
  let mallocArenas = 0;
  let otherAnonBytes = 0;
  const size = BigInt(ARENA_HEAP);
  maps.forEach((m, i) => {
    if (m.name.startsWith('/')) fileBytes += m.rssBytes;
    else if (m.name === '[heap]') mallocBytes += m.rssBytes;
    else if (m.name === '' && m.start % size === 0n && m.perms.startsWith('rw')) {
      // An arena heap: its used part read-write, the rest of its 64 MiB reserved without access.
      const next = maps[i + 1];
      const whole =
        m.end - m.start === size ||
        (next?.start === m.end && next.perms.startsWith('---') && next.end - m.start === size);
      if (whole) {
        mallocBytes += m.rssBytes;
        mallocArenas++;
      } else otherAnonBytes += m.rssBytes;
    } else if (m.name === '' || m.name.startsWith('[stack')) otherAnonBytes += m.rssBytes;
  });
  return { fileBytes, mallocBytes, mallocArenas, otherAnonBytes };
}

export function residentBreakdown(pid: number): ResidentBreakdown {
  return parseSmaps(readFileSync(`/proc/${pid}/smaps`, 'utf8'));
}
