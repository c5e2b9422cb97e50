/**
 * The base of the model-server images (dev/models/model-server-image.ts): Debian bookworm's `python3` (3.11, the
 * machines' Python, which the model servers' packages are installed for) on debootstrap's minbase, without Node.js
 * (the stand-in base's 166 MB of node, its headers and npm serve only the operator's image) and without the
 * documentation Debian's `-slim` images leave out (slimDebianRootfs), and with only the Debian packages python3 and
 * a few others need (`keep`: debian-closure.ts). Made by debootstrap from the Debian archive
 * like the stand-in, so it needs no image registry, and no `apt-get` runs in the model images' builds.
 */
import { keepOnlyClosure } from './debian-closure.js';
import { DEBIAN_MIRROR, ensureRootfsImage, IMAGE_PATH, must, recipeDigest, slimDebianRootfs } from './debian-rootfs.js';

export const PYTHON_BASE_RECIPE = {
  suite: 'bookworm',
  variant: 'minbase',
  mirror: DEBIAN_MIRROR,
  /** python3's Depends only (no Recommends), resolved by debootstrap. */
  include: ['python3'],
  /**
   * The packages the image keeps, with their dependency closure (debian-closure.ts); minbase's others go. dash is
   * /bin/sh (MLServer's entrypoint), libstdc++6 and libgcc-s1 are linked by the wheels' extension modules (grpc,
   * SciPy, scikit-learn), libc-bin has ldconfig (ctypes' find_library), tzdata the time zones, base-files and
   * base-passwd /etc/os-release, passwd and group.
   */
  keep: ['python3', 'dash', 'libstdc++6', 'libgcc-s1', 'libc-bin', 'tzdata', 'base-files', 'base-passwd'],
  /** Bump when assemble() changes what ends up in the image. */
  layout: 2,
} as const;

export const PYTHON_BASE_REPOSITORY = 'localhost/endpoint-operator-python-base';

export function pythonBaseTag(recipe: typeof PYTHON_BASE_RECIPE = PYTHON_BASE_RECIPE): string {
  return `${PYTHON_BASE_REPOSITORY}:3.11-bookworm-${recipeDigest(recipe)}`;
}

/** The Python base's image name, building (or re-importing its cached tarball) when podman does not have it. */
export async function ensurePythonBase(log: (line: string) => void, logFile: string): Promise<string> {
  const r = PYTHON_BASE_RECIPE;
  return ensureRootfsImage(
    {
      tag: pythonBaseTag(),
      debootstrap: [`--variant=${r.variant}`, `--include=${r.include.join(',')}`, r.suite],
      describe: `--variant=${r.variant} --include=${r.include.join(',')} ${r.suite} (about a minute)`,
      assemble: async (_work, rootfs, file) => {
        await slimDebianRootfs(rootfs);
        // The standard library's bytecode as `unchecked-hash`, like the model servers' packages
        // (dev/models/python-image-tree.ts): Debian's .pycs are checked against their sources' modification times,
        // which hold in this tarball (whole seconds both) but not through every copy image tools make (buildah's
        // COPY rounds them up), and uid 65532 on a read-only root could not rewrite a stale one.
        await must(
          'chroot',
          [
            rootfs,
            'python3',
            '-m',
            'compileall',
            '-q',
            '-f',
            '--invalidation-mode',
            'unchecked-hash',
            '/usr/lib/python3.11',
          ],
          file,
        );
        await keepOnlyClosure(rootfs, r.keep);
      },
      changes: [`ENV PATH=${IMAGE_PATH}`, 'CMD ["python3"]'],
    },
    log,
    logFile,
  );
}
