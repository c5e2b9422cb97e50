import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { capture, runLogged } from '../../../../dev/host/exec.js';

describe('runLogged', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('appends the command and all its output to the log, reports lines and the exit code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eo-exec-'));
    dirs.push(dir);
    const logFile = join(dir, 'build.log');
    const lines: string[] = [];
    let spawnedPid = 0;
    const code = await runLogged('/bin/sh', ['-c', 'echo "+++ step one"; echo oops >&2; ps -o pgid= -p $$; exit 3'], {
      logFile,
      onLine: (l) => lines.push(l),
      ownProcessGroup: true,
      onSpawn: (pid) => (spawnedPid = pid),
    });
    expect(code).toBe(3);
    expect(lines).toContain('+++ step one');
    expect(lines).toContain('oops');
    // Its own process group: the group id printed by the child is its own pid.
    expect(lines.map((l) => l.trim())).toContain(String(spawnedPid));
    const log = await readFile(logFile, 'utf8');
    expect(log).toMatch(/^\$ \/bin\/sh -c /);
    expect(log).toContain('+++ step one\n');
    expect(log).toContain('[exit 3]');
  });

  it('reports a missing executable as 127 instead of throwing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eo-exec-'));
    dirs.push(dir);
    expect(await runLogged('/nonexistent/tool', [], { logFile: join(dir, 'x.log') })).toBe(127);
    expect((await capture('/nonexistent/tool', [])).code).toBe(127);
  });
});
