import { open, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** True when a process with this pid exists (signal 0 checks without sending anything). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else, still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock file holds its owner's pid; it is stale when that text is not a pid or that pid is gone. */
export function lockIsStale(content: string, isAlive: (pid: number) => boolean): boolean {
  const pid = Number.parseInt(content.trim(), 10);
  return !Number.isInteger(pid) || pid <= 0 || !isAlive(pid);
}

export interface FileLock {
  release(): Promise<void>;
}

/**
 * An exclusive lock between processes on one machine, so two concurrent test runs never build kube-apiserver
 * twice into the same directory. O_EXCL creation is atomic; a lock left by a killed process is taken over.
 */
export async function acquireFileLock(
  path: string,
  opts: { onWait?: (ownerPid: string) => void; pollMs?: number; timeoutMs?: number } = {},
): Promise<FileLock> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  let told = false;
  for (;;) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = await readFile(path, 'utf8').catch(() => '');
    // An empty file may be a lock being written right now: only a dead pid makes it stale.
    if (owner !== '' && lockIsStale(owner, pidAlive)) {
      await rm(path, { force: true });
      continue;
    }
    if (!told) {
      opts.onWait?.(owner.trim());
      told = true;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${path} held by pid ${owner.trim()}`);
    await sleep(opts.pollMs ?? 2000);
  }
}
