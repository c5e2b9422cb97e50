import { spawn } from 'node:child_process';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ChildProcessGroup } from '../../../../dev/host/child-process-group.js';
import { pidAlive } from '../../../../dev/host/file-lock.js';
import { startWatchdog } from '../../../../dev/host/watchdog.js';

async function waitFor(predicate: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await sleep(200);
  }
  return predicate();
}

describe('watchdog', () => {
  it('ends the child process group and removes the data dir when the parent is killed with SIGKILL', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'eo-watchdog-test-'));
    // The parent it watches is a process of its own here, so that the test can SIGKILL it: the watchdog
    // knows its parent by pid only, and outlives it in a session of its own.
    const parent = spawn('sleep', ['300'], { stdio: 'ignore' });
    const parentExited = new Promise((resolve) => parent.once('exit', resolve));
    const child = await ChildProcessGroup.start('sleeper', 'sleep', ['300'], join(dataDir, 'child.log'));
    const watchdog = startWatchdog(parent.pid ?? 0, [child.pid], dataDir);
    expect(pidAlive(child.pid)).toBe(true);
    expect(pidAlive(watchdog.pid)).toBe(true);

    parent.kill('SIGKILL');
    await parentExited;
    // The watchdog polls every second, then sends SIGTERM (enough for sleep(1)).
    expect(await waitFor(() => !pidAlive(child.pid), 10_000)).toBe(true);
    expect(await waitFor(async () => (await stat(dataDir).catch(() => undefined)) === undefined, 10_000)).toBe(true);
    expect(await waitFor(() => !pidAlive(watchdog.pid), 10_000)).toBe(true);
  }, 30_000);
});
