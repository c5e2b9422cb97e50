/**
 * Local base images made from a Debian root filesystem, where no image registry is reachable: debootstrap into a
 * work directory, lay out whatever the image adds, tar it (`--numeric-owner`) into a cached tarball under
 * ~/.cache/endpoint-operator/image/, and `podman import` that. Used by the stand-in for `node:20-bookworm-slim`
 * (stand-in-base.ts) and the model servers' Python base (python-base.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runLogged } from '../host/exec.js';
import { cacheRoot } from '../host/paths.js';
import { imageExists, podmanOk } from './podman.js';

export const DEBIAN_MIRROR = 'http://deb.debian.org/debian';

export const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** 12 hex digits of a recipe's digest: a base image's tag, so any change to the recipe builds a new image. */
export function recipeDigest(recipe: object): string {
  return createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 12);
}

export interface RootfsImage {
  /** The image's name; its tag names the tarball. */
  readonly tag: string;
  /** debootstrap's arguments before the target directory: variant, `--include`, suite. */
  readonly debootstrap: readonly string[];
  /** What `log` says while debootstrap runs. */
  readonly describe: string;
  /** Lays out what the image adds to the debootstrapped `rootfs`; `work` is a scratch directory. */
  readonly assemble: (work: string, rootfs: string, logFile: string) => Promise<void>;
  /** `podman import --change` instructions (ENV, CMD). */
  readonly changes: readonly string[];
}

/** The image's name, building its tarball (or re-importing the cached one) when podman does not have it. */
export async function ensureRootfsImage(
  image: RootfsImage,
  log: (line: string) => void,
  logFile: string,
): Promise<string> {
  if (await imageExists(image.tag)) return image.tag;
  const dir = join(cacheRoot(), 'image');
  await mkdir(dir, { recursive: true });
  const tarball = join(dir, `${image.tag.slice(image.tag.lastIndexOf(':') + 1)}.tar`);
  if (!existsSync(tarball)) {
    const work = await mkdtemp(join(dir, 'work-'));
    try {
      const rootfs = join(work, 'rootfs');
      log(`debootstrap ${image.describe}`);
      await must('debootstrap', [...image.debootstrap, rootfs, DEBIAN_MIRROR], logFile);
      await image.assemble(work, rootfs, logFile);
      await dropAptCaches(rootfs);
      // --numeric-owner: the owners inside the root filesystem, not whatever names the host maps them to.
      await must('tar', ['--numeric-owner', '-C', rootfs, '-cf', `${tarball}.partial`, '.'], logFile);
      await rename(`${tarball}.partial`, tarball);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  log(`importing the base image ${image.tag}`);
  await podmanOk(['import', ...image.changes.flatMap((c) => ['--change', c]), tarball, image.tag]);
  return image.tag;
}

/** apt's downloaded lists and package archives: what `apt-get update` fetches again in a build that needs them. */
async function dropAptCaches(rootfs: string): Promise<void> {
  for (const cache of ['var/lib/apt/lists', 'var/cache/apt']) {
    await rm(join(rootfs, cache), { recursive: true, force: true });
    await mkdir(join(rootfs, cache), { recursive: true });
  }
  await mkdir(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
  await mkdir(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
}

/**
 * The documentation a program never reads, as Debian's own `-slim` images leave it out (debuerreotype's slimify):
 * manual pages, info pages, translations of messages, and /usr/share/doc except each package's copyright file.
 * Removed from `rootfs` and excluded for later `apt-get install`s by a dpkg configuration file.
 */
export async function slimDebianRootfs(rootfs: string): Promise<void> {
  const share = join(rootfs, 'usr/share');
  await writeFile(
    join(rootfs, 'etc/dpkg/dpkg.cfg.d/slim-image'),
    [
      '# Documentation no program reads (as in debian:bookworm-slim); copyrights stay.',
      ...['doc', 'groff', 'info', 'linda', 'lintian/overrides', 'locale', 'man'].map(
        (d) => `path-exclude /usr/share/${d}/*`,
      ),
      'path-include /usr/share/doc/*/copyright',
      '',
    ].join('\n'),
  );
  for (const dir of ['groff', 'info', 'linda', 'lintian/overrides', 'locale', 'man']) {
    await rm(join(share, dir), { recursive: true, force: true });
    await mkdir(join(share, dir), { recursive: true });
  }
  for (const pkg of await readdir(join(share, 'doc'))) {
    const dir = join(share, 'doc', pkg);
    for (const entry of await readdir(dir).catch(() => [] as string[]))
      if (entry !== 'copyright') await rm(join(dir, entry), { recursive: true, force: true });
  }
}

export async function must(cmd: string, args: readonly string[], logFile: string): Promise<void> {
  const code = await runLogged(cmd, args, { logFile });
  if (code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${code}); see ${logFile}`);
}
