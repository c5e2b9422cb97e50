import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ControlPlaneError } from './errors.js';
import { capture, runLogged } from './exec.js';
import { acquireFileLock } from './file-lock.js';
import { cacheRoot } from './paths.js';

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

export async function isInstalled(pkg: string): Promise<boolean> {
  const result = await capture('dpkg-query', ['-W', '-f=${Status}', pkg]);
  return result.code === 0 && result.stdout.trim() === 'install ok installed';
}

/** apt-get waits this long for dpkg's lock held by a program other than ours (unattended-upgrades, an admin's apt). */
const APT_LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=600'];

async function missingPackages(pkgs: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const pkg of pkgs) if (!(await isInstalled(pkg))) missing.push(pkg);
  return missing;
}

/**
 * Installs whichever of `pkgs` are missing; costs one dpkg-query per package when all are there.
 *
 * The project's installs take turns under one lock: the test files run in parallel, and two of them installing at
 * once (h2load's nghttp2-client beside the image's podman) made the second `apt-get update` fail at once on
 * /var/lib/apt/lists/lock, which DPkg::Lock::Timeout does not cover (it waits for dpkg's lock only).
 */
export async function ensureDebianPackages(
  pkgs: readonly string[],
  log: (line: string) => void,
  logFile: string,
): Promise<void> {
  const missing = await missingPackages(pkgs);
  if (missing.length === 0) return;
  if (!isRoot()) {
    throw new ControlPlaneError(
      `installing the Debian packages ${missing.join(', ')} needs root: ` +
        `run as root, or install them first with: apt-get install ${missing.join(' ')}`,
    );
  }
  await mkdir(cacheRoot(), { recursive: true });
  const lock = await acquireFileLock(join(cacheRoot(), 'apt.lock'), {
    onWait: (pid) => log(`waiting for pid ${pid}, which is installing Debian packages`),
  });
  try {
    // What the lock's last holder installed is not installed again.
    const toInstall = await missingPackages(missing);
    if (toInstall.length === 0) return;
    log(`installing Debian packages: ${toInstall.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if ((await runLogged('apt-get', [...APT_LOCK_WAIT, 'update'], { logFile, env })) !== 0) {
      throw new ControlPlaneError('apt-get update failed: is the Debian archive reachable?', logFile);
    }
    const code = await runLogged(
      'apt-get',
      [...APT_LOCK_WAIT, 'install', '-y', '--no-install-recommends', ...toInstall],
      { logFile, env },
    );
    if (code !== 0) throw new ControlPlaneError(`apt-get install ${toInstall.join(' ')} failed`, logFile);
  } finally {
    await lock.release();
  }
}

/** The first executable called `name` on PATH, like `command -v`. */
export async function whichOnPath(name: string, path = process.env['PATH'] ?? ''): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}
