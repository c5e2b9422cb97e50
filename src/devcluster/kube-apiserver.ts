import { constants } from 'node:fs';
import { access, chmod, copyFile, cp, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILD_PACKAGES, ensureDebianPackages } from './apt.js';
import { ControlPlaneError } from './errors.js';
import { capture, runLogged } from './exec.js';
import { acquireFileLock } from './file-lock.js';
import { KubernetesSource } from './kube-source.js';
import { cacheRoot } from './paths.js';
import { startWatchdog } from './watchdog.js';
import type { Watchdog } from './watchdog.js';

/** The kube-apiserver version Debian bookworm ships the source of (package 1.20.5+really1.20.2). */
export const KUBE_VERSION = 'v1.20.2';
const BINARY = 'kube-apiserver';
const COMPLETE_MARKER = '.complete';

/**
 * Go 1.19 lays out maps differently from what the reflect2/json-iterator versions vendored in Kubernetes 1.20
 * assume; with them the apiserver dies with `fatal error: fault` in mapiterinit on the first custom-resource
 * write. Debian's packaged versions (reflect2 1.0.2, json-iterator 1.1.12) are fixed.
 */
export const VENDOR_REPLACEMENTS = [
  { vendorPath: 'github.com/modern-go/reflect2', debianPackage: 'golang-github-modern-go-reflect2-dev' },
  { vendorPath: 'github.com/json-iterator/go', debianPackage: 'golang-github-json-iterator-go-dev' },
] as const;
const GOCODE = '/usr/share/gocode/src';

/**
 * Built with Go >= 1.19, the vendored OpenAPI type validators of 1.20 take every empty string for
 * null: `reflect.DeepEqual(reflect.Zero(t), reflect.ValueOf(data))` compares two reflect.Value
 * headers, and since Go 1.19 both point at the runtime's shared zero buffer for "". Custom
 * resources with `""` in a string field were then refused ("must be of type string: \"null\"").
 * Under the Go the release was built with, that comparison was only true for nil, so the patch
 * restores exactly the released behaviour.
 */
export const SOURCE_PATCHES = [
  'vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go',
  'vendor/github.com/go-openapi/validate/type.go',
].map((file) => ({
  file,
  find: 'if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {',
  replace: 'if data == nil {',
}));

/** Bumped whenever the build recipe changes what the binary does, so a cached older build is not reused. */
export const RECIPE_REVISION = 2;

/** The cache directory name of a build: version, the source package's .dsc checksum and the recipe revision. */
export function buildKey(version: string, dscSha256: string): string {
  return `${BINARY}-${version}-${dscSha256.slice(0, 16)}-r${RECIPE_REVISION}`;
}

/** Applies SOURCE_PATCHES; a patch that no longer matches fails the build instead of being skipped silently. */
async function patchSource(tree: string, logFile: string): Promise<void> {
  for (const patch of SOURCE_PATCHES) {
    const path = join(tree, patch.file);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined || !text.includes(patch.find)) throw new ControlPlaneError(`cannot patch ${patch.file}: the expected code is not there`, logFile);
    await writeFile(path, text.replace(patch.find, patch.replace));
  }
}

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(() => true, () => false);
}

/** A finished build of KUBE_VERSION in the cache (any source checksum), newest first; undefined when none. */
async function cachedBinary(root: string): Promise<string | undefined> {
  const entries = await readdir(root).catch(() => [] as string[]);
  const candidates: { path: string; mtime: number }[] = [];
  for (const name of entries) {
    if (!name.startsWith(`${BINARY}-${KUBE_VERSION}-`) || !name.endsWith(`-r${RECIPE_REVISION}`)) continue;
    const marker = await stat(join(root, name, COMPLETE_MARKER)).catch(() => undefined);
    const path = join(root, name, BINARY);
    if (marker && (await isExecutable(path))) candidates.push({ path, mtime: marker.mtimeMs });
  }
  return candidates.sort((a, b) => b.mtime - a.mtime)[0]?.path;
}

/**
 * The path of a kube-apiserver v1.20.2 binary: `EO_KUBE_APISERVER` if set, else the cached build, else it is
 * built now from Debian's source package (5 to 15 minutes on two cores) under a lock, so concurrent runs
 * build it once.
 */
export async function ensureKubeApiserver(log: (line: string) => void = () => {}): Promise<string> {
  const override = process.env['EO_KUBE_APISERVER'];
  if (override !== undefined && override !== '') {
    if (!(await isExecutable(override))) throw new ControlPlaneError(`EO_KUBE_APISERVER=${override} is not an executable file`);
    return override;
  }
  const root = cacheRoot();
  const cached = await cachedBinary(root);
  if (cached !== undefined) return cached;

  await mkdir(join(root, 'logs'), { recursive: true });
  const lock = await acquireFileLock(join(root, 'build.lock'), {
    onWait: (pid) => log(`waiting for another process (pid ${pid}) that is building kube-apiserver...`),
  });
  try {
    const builtMeanwhile = await cachedBinary(root);
    if (builtMeanwhile !== undefined) return builtMeanwhile;
    return await build(root, log);
  } finally {
    await lock.release();
  }
}

async function build(root: string, log: (line: string) => void): Promise<string> {
  const logFile = join(root, 'logs', `build-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  log(`building kube-apiserver ${KUBE_VERSION} from Debian's kubernetes source package; this takes minutes (5 to 15 on 2 cores, depending on load), once`);
  log(`build log: ${logFile}`);
  await ensureDebianPackages(BUILD_PACKAGES, log, logFile);

  const source = new KubernetesSource(join(root, 'apt-src'), logFile);
  await source.update();
  const { dscName, dscSha256 } = await source.describe();
  const key = buildKey(KUBE_VERSION, dscSha256);
  log(`source package ${dscName} (sha256 ${dscSha256.slice(0, 16)}...)`);

  const workDir = join(root, 'build', key);
  await rm(workDir, { recursive: true, force: true });
  const tree = await source.fetch(workDir);

  for (const { vendorPath, debianPackage } of VENDOR_REPLACEMENTS) {
    const from = join(GOCODE, vendorPath);
    if (!(await stat(from).catch(() => undefined))) throw new ControlPlaneError(`${from} is missing: is ${debianPackage} installed?`, logFile);
    const to = join(tree, 'vendor', vendorPath);
    await rm(to, { recursive: true, force: true });
    // dereference: Debian's gocode trees may contain symlinks into other packages.
    await cp(from, to, { recursive: true, dereference: true });
  }
  // Without a git checkout, hack/lib/version.sh reads the version from this file; kubectl shows it.
  await patchSource(tree, logFile);
  const versionFile = join(tree, '.eo-version');
  const [major = '1', minor = '20'] = KUBE_VERSION.slice(1).split('.');
  await writeFile(versionFile, `KUBE_GIT_VERSION='${KUBE_VERSION}'\nKUBE_GIT_TREE_STATE='archive'\nKUBE_GIT_MAJOR='${major}'\nKUBE_GIT_MINOR='${minor}'\nKUBE_GIT_COMMIT=''\n`);

  const started = Date.now();
  const heartbeat = setInterval(() => log(`  still building kube-apiserver (${Math.round((Date.now() - started) / 1000)} s)...`), 30_000);
  let code: number;
  let watchdog: Watchdog | undefined;
  try {
    // The Kubernetes 1.20 build runs in GOPATH mode (hack/lib/init.sh sets GO111MODULE=off) with the vendor tree.
    code = await runLogged('make', [`WHAT=cmd/${BINARY}`], {
      logFile,
      cwd: tree,
      env: { ...process.env, KUBE_GIT_VERSION_FILE: versionFile, CGO_ENABLED: '0', PATH: `/usr/lib/go/bin:${process.env['PATH'] ?? ''}` },
      onLine: (line) => {
        if (line.startsWith('+++')) log(`  ${line}`);
      },
      // make and its go compilers must not outlive us (Ctrl-C, SIGKILL): a later build would race them.
      ownProcessGroup: true,
      onSpawn: (pid) => (watchdog = startWatchdog(process.pid, [pid], '')),
    });
  } finally {
    clearInterval(heartbeat);
    await watchdog?.dismiss();
  }
  const built = join(tree, '_output', 'bin', BINARY);
  if (code !== 0 || !(await isExecutable(built))) throw new ControlPlaneError(`building kube-apiserver failed (make exit ${code})`, logFile);

  const version = await capture(built, ['--version']);
  if (!version.stdout.includes(KUBE_VERSION)) {
    throw new ControlPlaneError(`the built kube-apiserver reports "${version.stdout.trim()}", expected ${KUBE_VERSION}`, logFile);
  }
  const dest = join(root, key);
  await mkdir(dest, { recursive: true });
  await copyFile(built, join(dest, BINARY));
  await chmod(join(dest, BINARY), 0o755);
  await writeFile(join(dest, COMPLETE_MARKER), `${JSON.stringify({ version: KUBE_VERSION, dsc: dscName, dscSha256, builtAt: new Date().toISOString(), buildSeconds: Math.round((Date.now() - started) / 1000) })}\n`);
  // The source tree and Go build cache are ~2 GB; only the binary is worth keeping.
  await rm(workDir, { recursive: true, force: true });
  log(`built kube-apiserver in ${Math.round((Date.now() - started) / 1000)} s: ${join(dest, BINARY)}`);
  return join(dest, BINARY);
}
