/**
 * Images for the real node, made here with the project's podman (dev/image/podman.ts) and pushed to the local
 * registry (registry.ts), since no registry on the internet is reachable: the sandbox ("pause") image every pod
 * starts with, and a small HTTP server the node's own tests run. Both are Debian's static busybox in an
 * otherwise empty image.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackages } from '../../host/apt.js';
import { runLogged } from '../../host/exec.js';
import { ControlPlaneError } from '../../host/errors.js';
import { PAUSE_IMAGE, REGISTRY_HOST } from './node-config.js';
import { registryStatus, registryStorageDir } from './registry.js';

/** Debian's statically linked busybox (busybox-static). */
const BUSYBOX = '/bin/busybox';

/**
 * The sandbox image: a shell that waits for SIGTERM as PID 1 of the pod's sandbox. Each container has its
 * own PID namespace (the default), so it has no orphans to reap.
 */
const PAUSE_CONTAINERFILE = `FROM scratch
COPY busybox /bin/busybox
ENTRYPOINT ["/bin/busybox", "sh", "-c", "trap 'exit 0' TERM INT; while :; do /bin/busybox sleep 3600 & wait $!; done"]
`;

/** The node tests' server: busybox httpd serving /www on port 8080, as root (an image default left as is). */
export const HTTPD_IMAGE = `${REGISTRY_HOST}/endpoint-operator/busybox-httpd:1`;
export const HTTPD_PORT = 8080;
const HTTPD_CONTAINERFILE = `FROM scratch
COPY busybox /bin/busybox
COPY index.html /www/index.html
ENTRYPOINT ["/bin/busybox", "httpd", "-f", "-v", "-p", "${HTTPD_PORT}", "-h", "/www"]
`;
/** What the test server answers on GET /. */
export const HTTPD_BODY = 'served by busybox httpd on the real node\n';

/** podman, buildah and the static busybox the images are made of. */
export const NODE_IMAGE_PACKAGES = ['podman', 'buildah', 'runc', 'fuse-overlayfs', 'busybox-static'] as const;

/**
 * Builds `containerfile` as `name` and pushes it to the local registry; its context holds busybox, `files`
 * (name → text) and `copies` (name → a file of this machine, e.g. a static Go binary). Skipped when the registry
 * (whose storage is kept between runs) already holds `name` as built from this very content (pushedStamps).
 */
export async function buildAndPush(
  name: string,
  containerfile: string,
  files: Readonly<Record<string, string>>,
  logFile: string,
  copies: Readonly<Record<string, string>> = {},
): Promise<void> {
  const content = await contentDigest(containerfile, files, copies);
  if (await registryHolds(name, content)) return;
  const dir = await mkdtemp(join(tmpdir(), 'eo-node-image-'));
  try {
    await copyFile(BUSYBOX, join(dir, 'busybox'));
    await writeFile(join(dir, 'Containerfile'), containerfile);
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
    for (const [file, source] of Object.entries(copies)) await copyFile(source, join(dir, file));
    // chroot isolation: the image has no RUN step, and the default isolation needs a cgroup setup these machines lack.
    const built = await runLogged(
      'podman',
      ['build', '--isolation', 'chroot', '--tag', name, '--file', join(dir, 'Containerfile'), dir],
      { logFile },
    );
    if (built !== 0) throw new ControlPlaneError(`podman build of ${name} failed (exit ${built})`, logFile);
    await pushToNodeRegistry(name, logFile);
    await recordPushed(name, content);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A digest of everything an image of buildAndPush is made of: its Containerfile and every file of its context. */
async function contentDigest(
  containerfile: string,
  files: Readonly<Record<string, string>>,
  copies: Readonly<Record<string, string>>,
): Promise<string> {
  const hash = createHash('sha256')
    .update(containerfile)
    .update(await readFile(BUSYBOX));
  for (const [file, text] of Object.entries(files)) hash.update(`\0${file}\0`).update(text);
  for (const [file, source] of Object.entries(copies)) hash.update(`\0${file}\0`).update(await readFile(source));
  return hash.digest('hex');
}

/**
 * Which content each image buildAndPush pushed was built from, kept inside the registry's storage so that it goes
 * when the storage does.
 */
const pushedStamps = (): string => join(registryStorageDir(), 'endpoint-operator-pushed.json');

async function readPushed(): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(pushedStamps(), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/** True when the registry answers for `name`'s manifest and it was pushed from `content`. */
async function registryHolds(name: string, content: string): Promise<boolean> {
  return (await readPushed())[name] === content && (await registryHasManifest(name));
}

/** True when the local registry answers for the manifest of `name` (`<REGISTRY_HOST>/<repository>:<tag>`). */
async function registryHasManifest(name: string): Promise<boolean> {
  const reference = name.slice(`${REGISTRY_HOST}/`.length);
  const colon = reference.lastIndexOf(':');
  if (colon < 0) return false;
  return (await registryStatus(`${reference.slice(0, colon)}/manifests/${reference.slice(colon + 1)}`, 'HEAD')) === 200;
}

async function recordPushed(name: string, content: string): Promise<void> {
  const stamps = { ...(await readPushed()), [name]: content };
  const partial = `${pushedStamps()}.${process.pid}`;
  await writeFile(partial, `${JSON.stringify(stamps, null, 2)}\n`);
  await rename(partial, pushedStamps());
}

/** Pushes a podman image named `<REGISTRY_HOST>/…` to the local registry, which speaks plain HTTP. */
export async function pushToNodeRegistry(name: string, logFile: string): Promise<void> {
  if (!name.startsWith(`${REGISTRY_HOST}/`))
    throw new ControlPlaneError(`${name} is not an image of the local registry ${REGISTRY_HOST}`);
  const pushed = await runLogged('podman', ['push', '--tls-verify=false', name], { logFile });
  if (pushed !== 0) throw new ControlPlaneError(`podman push of ${name} failed (exit ${pushed})`, logFile);
}

/** The pause and httpd images, built and pushed (seconds once podman has its layers). */
export async function ensureNodeImages(log: (line: string) => void, logFile: string): Promise<void> {
  await ensureDebianPackages(NODE_IMAGE_PACKAGES, log, logFile);
  await buildAndPush(PAUSE_IMAGE, PAUSE_CONTAINERFILE, {}, logFile);
  await buildAndPush(HTTPD_IMAGE, HTTPD_CONTAINERFILE, { 'index.html': HTTPD_BODY }, logFile);
}

/**
 * A local podman image (e.g. `localhost/endpoint-operator-model-server-mlserver:<digest>`, or an image ID) in the
 * local registry, as `<REGISTRY_HOST>/endpoint-operator/<nameAndTag>` (by default the local name's last path
 * segment); returns that reference. The registry keeps its storage across runs, so an image whose tag it has is
 * not pushed again. Name a tag that changes with the content: the registry and the node keep what they have.
 */
export async function publishToNodeRegistry(
  localName: string,
  logFile: string,
  nameAndTag: string = localName.split('/').at(-1) ?? localName,
): Promise<string> {
  const name = `${REGISTRY_HOST}/endpoint-operator/${nameAndTag}`;
  // The tag changes with the content (below), so a registry that has it has this image.
  if (await registryHasManifest(name)) return name;
  const tagged = await runLogged('podman', ['tag', localName, name], { logFile });
  if (tagged !== 0) throw new ControlPlaneError(`podman tag ${localName} ${name} failed (exit ${tagged})`, logFile);
  await pushToNodeRegistry(name, logFile);
  return name;
}
