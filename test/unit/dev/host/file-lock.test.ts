import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireFileLock } from '../../../../dev/host/file-lock.js';

describe('acquireFileLock', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  async function lockPath(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'eo-lock-'));
    dirs.push(dir);
    return join(dir, 'build.lock');
  }

  it('makes a second holder wait until the first releases', async () => {
    const path = await lockPath();
    const first = await acquireFileLock(path);
    expect((await readFile(path, 'utf8')).trim()).toBe(String(process.pid));
    const order: string[] = [];
    let waitedFor = '';
    const second = acquireFileLock(path, { pollMs: 20, onWait: (owner) => (waitedFor = owner) }).then((lock) => {
      order.push('second acquired');
      return lock;
    });
    await new Promise((r) => setTimeout(r, 100));
    order.push('first releases');
    await first.release();
    await (await second).release();
    expect(order).toEqual(['first releases', 'second acquired']);
    expect(waitedFor).toBe(String(process.pid));
  });

  it('takes over a lock whose owner is dead', async () => {
    const path = await lockPath();
    // pid 2^22+1 is above Linux's pid_max limit, so no process can have it.
    await writeFile(path, `${2 ** 22 + 1}\n`);
    const lock = await acquireFileLock(path, { pollMs: 20, timeoutMs: 2_000 });
    expect((await readFile(path, 'utf8')).trim()).toBe(String(process.pid));
    await lock.release();
  });

  it('gives up after its timeout while a live process holds the lock', async () => {
    const path = await lockPath();
    await writeFile(path, '1\n'); // pid 1 is always alive
    await expect(acquireFileLock(path, { pollMs: 20, timeoutMs: 100 })).rejects.toThrow(/held by pid 1/);
  });
});
