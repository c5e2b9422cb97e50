/**
 * The binaries the local cluster runs are built from the wrapper modules in tools/ and cached with their size
 * and digest: each reports the release it was built as, and a damaged cached binary is rebuilt, never run.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, open, readFile, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureClusterBinaries, KWOK } from '../../../dev/cluster/binaries.js';
import { buildDir, ensureGoBuild } from '../../../dev/cluster/go-build.js';

const version = (bin: string, args: string[]): string => {
  const r = spawnSync(bin, args, { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
};

describe('the cluster binaries', () => {
  const scratch: string[] = [];
  afterAll(async () => {
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  });

  it('report the release they were built as', async () => {
    const bins = await ensureClusterBinaries();
    const v = bins.release.version;
    expect(version(bins.kubeApiserver, ['--version'])).toContain(`Kubernetes ${v}`);
    expect(version(bins.kubeControllerManager, ['--version'])).toContain(`Kubernetes ${v}`);
    expect(version(bins.kubeScheduler, ['--version'])).toContain(`Kubernetes ${v}`);
    expect(version(bins.kubectl, ['version', '--client'])).toContain(`Client Version: ${v}`);
    expect(version(bins.etcd, ['--version'])).toContain(`etcd Version: ${bins.release.etcd.version.slice(1)}`);
    expect(version(bins.kwok, ['--version'])).toContain(`kwok version ${KWOK.version}`);
  });

  it('rebuilds a truncated or altered cached binary instead of running it', async () => {
    await ensureGoBuild(KWOK);
    const cached = await buildDir(KWOK);
    // A cache of its own, so the run's cluster keeps its binaries.
    const cache = await mkdtemp(join(tmpdir(), 'eo-cache-'));
    scratch.push(cache);
    const copy = join(cache, 'bin', basename(cached));
    await cp(cached, copy, { recursive: true });
    const before = await readFile(join(copy, 'kwok'));
    await truncate(join(copy, 'kwok'), Math.floor(before.length / 2));
    const previous = process.env['EO_CACHE_DIR'];
    process.env['EO_CACHE_DIR'] = cache;
    try {
      const logged: string[] = [];
      const paths = await ensureGoBuild(KWOK, (line) => logged.push(line));
      expect(dirname(paths['kwok'] ?? '')).toBe(copy);
      expect(logged.some((l) => l.startsWith('building kwok'))).toBe(true);
      expect((await readFile(join(copy, 'kwok'))).length).toBe(before.length);
      expect(version(join(copy, 'kwok'), ['--version'])).toContain(`kwok version ${KWOK.version}`);

      // Verified once, a binary is not hashed again while its size, inode and mtime stand; a byte changed in
      // place (same size, a new mtime) is hashed again, and rebuilt.
      expect((await ensureGoBuild(KWOK, (line) => logged.push(`again: ${line}`))).kwok).toBe(paths['kwok']);
      expect(logged.some((l) => l.startsWith('again: building'))).toBe(false);
      const file = await open(join(copy, 'kwok'), 'r+');
      try {
        const at = Math.floor(before.length / 3);
        const byte = Buffer.alloc(1);
        await file.read(byte, 0, 1, at);
        await file.write(Buffer.from([(byte[0] ?? 0) ^ 0xff]), 0, 1, at);
      } finally {
        await file.close();
      }
      const rebuilt: string[] = [];
      await ensureGoBuild(KWOK, (line) => rebuilt.push(line));
      expect(rebuilt.some((l) => l.startsWith('building kwok'))).toBe(true);
      expect(version(join(copy, 'kwok'), ['--version'])).toContain(`kwok version ${KWOK.version}`);
    } finally {
      if (previous === undefined) delete process.env['EO_CACHE_DIR'];
      else process.env['EO_CACHE_DIR'] = previous;
    }
  });
});
