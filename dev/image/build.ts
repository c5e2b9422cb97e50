/**
 * Builds the project's real Dockerfile with podman (buildah) on the stand-in base: what `npm run image`
 * and the image tests run. Chroot isolation because the default OCI isolation needs a cgroup setup these
 * machines lack; host networking so the build reaches the npm registry and the Debian archive.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireFileLock } from '../host/file-lock.js';
import { runLogged } from '../host/exec.js';
import { cacheRoot } from '../host/paths.js';
import { ensurePodman, imageLogDir, imageSize, podmanOk } from './podman.js';
import { ensureStandInBase } from './stand-in-base.js';

/** The name `npm run image` and the image tests give the build. */
export const LOCAL_IMAGE_NAME = 'localhost/endpoint-operator:dev';

export interface BuiltImage {
  readonly name: string;
  /** The image ID: what to run, as another build may move the name meanwhile. */
  readonly id: string;
  readonly base: string;
  readonly sizeBytes: number;
  readonly baseSizeBytes: number;
  readonly seconds: number;
}

export interface BuildImageOptions {
  /** The directory holding the Dockerfile and the build context. */
  readonly contextDir: string;
  readonly name: string;
  readonly log?: (line: string) => void;
}

/** Where a mounted CA bundle appears inside the build's RUN steps. */
const BUILD_CA_PATH = '/run/endpoint-operator-build-ca.crt';

/**
 * The machine's CA bundle, for a TLS-inspecting proxy between the build and the registries: the one
 * Node is told about (NODE_EXTRA_CA_CERTS), else Debian's.
 */
function hostCaBundle(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromNode = env['NODE_EXTRA_CA_CERTS'];
  if (fromNode !== undefined && fromNode !== '' && existsSync(fromNode)) return fromNode;
  const debian = '/etc/ssl/certs/ca-certificates.crt';
  return existsSync(debian) ? debian : undefined;
}

export async function buildImage(opts: BuildImageOptions): Promise<BuiltImage> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  await mkdir(imageLogDir(), { recursive: true });
  const logFile = join(imageLogDir(), 'image-build.log');
  // One builder at a time on a machine: concurrent test runs share podman's storage and the stand-in.
  const lock = await acquireFileLock(join(cacheRoot(), 'image.lock'), {
    onWait: (pid) => log(`waiting for pid ${pid}, which is building the image`),
  });
  try {
    await ensurePodman(log, logFile);
    const base = await ensureStandInBase(log, logFile);
    const ca = hostCaBundle();
    const caArgs =
      ca === undefined
        ? []
        : ['--volume', `${ca}:${BUILD_CA_PATH}:ro`, '--build-arg', `NODE_EXTRA_CA_CERTS=${BUILD_CA_PATH}`];
    log(`podman build of ${opts.name} on ${base}`);
    const code = await runLogged(
      'podman',
      [
        'build',
        '--isolation',
        'chroot',
        '--network',
        'host',
        '--build-arg',
        `NODE_IMAGE=${base}`,
        ...caArgs,
        '--tag',
        opts.name,
        '--file',
        join(opts.contextDir, 'Dockerfile'),
        opts.contextDir,
      ],
      { logFile },
    );
    if (code !== 0) throw new Error(`podman build of ${opts.name} failed (exit ${code}); see ${logFile}`);
    // Every source change leaves the previous build's stages behind, untagged; they are also the layer cache of the
    // next build, so only those a day old go (a warm build then redoes `npm ci` at most once a day).
    await podmanOk(['image', 'prune', '--force', '--filter', 'until=24h']);
    const id = await podmanOk(['image', 'inspect', '--format', '{{.Id}}', opts.name]);
    return {
      name: opts.name,
      id,
      base,
      sizeBytes: await imageSize(opts.name),
      baseSizeBytes: await imageSize(base),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await lock.release();
  }
}
