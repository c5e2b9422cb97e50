import { spawn } from 'node:child_process';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { pidAlive } from '../../../../dev/host/file-lock.js';

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
    const parent = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'fixtures', 'watched-parent.ts'),
        dataDir,
        join(dataDir, 'child.log'),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: parent.stdout }).once('line', resolve);
      parent.once('exit', (code) => reject(new Error(`fixture exited early (${String(code)})`)));
    });
    const { child, watchdog } = JSON.parse(line) as { child: number; watchdog: number };
    expect(pidAlive(child)).toBe(true);
    expect(pidAlive(watchdog)).toBe(true);

    parent.kill('SIGKILL');
    // The watchdog polls every second, then sends SIGTERM (enough for sleep(1)).
    expect(await waitFor(() => !pidAlive(child), 10_000)).toBe(true);
    expect(await waitFor(async () => (await stat(dataDir).catch(() => undefined)) === undefined, 10_000)).toBe(true);
    expect(await waitFor(() => !pidAlive(watchdog), 10_000)).toBe(true);
  }, 30_000);
});
