import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ensureDebianPackages } from '../../../../dev/host/apt.js';

/**
 * Stand-ins for dpkg-query and apt-get, first on PATH: installed packages are files in `state`, and `apt-get update`
 * refuses, as the real one does, while another apt-get holds the package lists (exit 100, "Could not get lock").
 */
function fakeApt(bin: string, state: string): void {
  writeFileSync(
    join(bin, 'dpkg-query'),
    `#!/bin/sh\nfor last; do :; done\n[ -e "${state}/$last" ] && printf 'install ok installed' && exit 0\nexit 1\n`,
  );
  writeFileSync(
    join(bin, 'apt-get'),
    `#!/bin/sh
for arg; do case "$arg" in
  update)
    mkdir "${state}/.lists-lock" 2>/dev/null || { echo "E: Could not get lock ${state}/.lists-lock"; exit 100; }
    sleep 0.3; rmdir "${state}/.lists-lock"; echo update >> "${state}/.calls"; exit 0 ;;
  install) installing=1 ;;
  -*|DPkg*) ;;
  *) [ -n "$installing" ] && touch "${state}/$arg" && echo "install $arg" >> "${state}/.calls" ;;
esac; done
exit 0
`,
  );
  chmodSync(join(bin, 'dpkg-query'), 0o755);
  chmodSync(join(bin, 'apt-get'), 0o755);
}

describe('ensureDebianPackages from two callers at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eo-apt-'));
  const bin = join(dir, 'bin');
  const state = join(dir, 'state');
  const saved = { PATH: process.env['PATH'], EO_CACHE_DIR: process.env['EO_CACHE_DIR'] };

  afterAll(() => {
    process.env['PATH'] = saved.PATH;
    if (saved.EO_CACHE_DIR === undefined) delete process.env['EO_CACHE_DIR'];
    else process.env['EO_CACHE_DIR'] = saved.EO_CACHE_DIR;
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs in turn, each package once, and neither fails on the other holding apt', async () => {
    mkdirSync(bin);
    mkdirSync(state);
    fakeApt(bin, state);
    process.env['PATH'] = `${bin}:${saved.PATH ?? ''}`;
    process.env['EO_CACHE_DIR'] = join(dir, 'cache');
    vi.spyOn(process, 'getuid').mockReturnValue(0);

    const log = join(dir, 'apt.log');
    const lines: string[] = [];
    await Promise.all([
      ensureDebianPackages(['nghttp2-client'], (l) => lines.push(`a: ${l}`), log),
      ensureDebianPackages(['ipset', 'nghttp2-client'], (l) => lines.push(`b: ${l}`), log),
    ]);

    const calls = readFileSync(join(state, '.calls'), 'utf8').trim().split('\n');
    expect(calls.filter((c) => c === 'install nghttp2-client')).toHaveLength(1);
    expect(calls.filter((c) => c === 'install ipset')).toHaveLength(1);
    expect(lines.some((l) => l.includes('waiting for pid'))).toBe(true);
  }, 20_000);
});
