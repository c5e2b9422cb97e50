/**
 * Builds Go programs from the committed wrapper modules under `tools/` (each a go.mod + go.sum that pins one
 * release and lists its commands as `tool` lines), with the machine's Go and the Go module proxy, and caches
 * the binaries outside the repository: `<cache>/bin/<module>-<version>-<go version>-<digest of the module's files and build flags>/`.
 *
 * A cached build is used only when its `.complete` record lists every binary with the size and SHA-256 it
 * was built with, so a truncated or half-copied binary is rebuilt, never exec'd. Hashing some 500 MB of
 * binaries costs seconds on every start, so a successful check leaves a `.verified` note of each file's size,
 * inode and modification time; while those are unchanged the files are the ones hashed. Builds run under a lock
 * (two test runs build once), into a temporary directory renamed into place when complete.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ControlPlaneError } from '../host/errors.js';
import { capture, runLogged } from '../host/exec.js';
import { acquireFileLock, pidAlive } from '../host/file-lock.js';
import { cacheRoot, packageRoot } from '../host/paths.js';
import { startWatchdog, type Watchdog } from '../host/watchdog.js';

export interface GoModuleBuild {
  /** The wrapper module's directory name under tools/. */
  readonly module: string;
  /** The release it pins, for the cache key and the messages. */
  readonly version: string;
  /** The binaries, as cached: what `go build … tool` writes (the last path element of each `tool` line), or its new name in `renames`. */
  readonly binaries: readonly string[];
  /** Go's output name → the cached binary's name, where Go's says nothing (`go.etcd.io/etcd/server/v3` builds `server`). */
  readonly renames?: Readonly<Record<string, string>>;
  /** `-X` settings and the like; `-s -w` is always added. */
  readonly ldflags?: readonly string[];
  /** Go build tags (`-tags`), e.g. containerd's no_btrfs to leave out snapshotters that need cgo. */
  readonly tags?: readonly string[];
  /** Run on each built binary: the arguments that print its version (by binary name), and what the output must contain. */
  readonly versionCheck?: { readonly args: (binary: string) => readonly string[]; readonly expect: string };
}

interface CompleteRecord {
  readonly version: string;
  readonly goVersion: string;
  readonly builtAt: string;
  readonly buildSeconds: number;
  readonly files: Record<string, { size: number; sha256: string }>;
}

const COMPLETE = '.complete';
/** The files' identity when they last hashed right (see the header). */
const VERIFIED = '.verified';

type FileIdentity = Record<string, { size: number; ino: number; mtimeMs: number }>;

/** The directory of the committed wrapper modules. */
export function toolsDir(): string {
  return join(packageRoot(), 'tools');
}

/** `go version`'s toolchain name (go1.26.8), or a clear error when Go is not installed. */
export async function goVersion(): Promise<string> {
  const r = await capture('go', ['env', 'GOVERSION'], goEnv());
  const version = r.stdout.trim();
  if (r.code !== 0 || !version.startsWith('go')) {
    throw new ControlPlaneError(
      `the local cluster's binaries are built with Go (1.26 or later) and the Go module proxy, but \`go env GOVERSION\` failed: ${r.stderr.trim() || `exit ${r.code}`}`,
    );
  }
  return version;
}

/** The build's environment: the machine's own toolchain (no toolchain download), no cgo. */
function goEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOTOOLCHAIN: 'local',
    CGO_ENABLED: '0',
    GOFLAGS: '-mod=readonly',
    PATH: `${process.env['PATH'] ?? ''}:/usr/local/go/bin`,
  };
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** True when every binary the record lists is there with its recorded size and digest. */
async function verified(dir: string, build: GoModuleBuild): Promise<boolean> {
  const record = await readFile(join(dir, COMPLETE), 'utf8').then(
    (t) => JSON.parse(t) as CompleteRecord,
    () => undefined,
  );
  if (record === undefined) return false;
  const identity: FileIdentity = {};
  for (const name of build.binaries) {
    const want = record.files[name];
    const got = await stat(join(dir, name)).catch(() => undefined);
    if (want === undefined || got === undefined || got.size !== want.size) return false;
    identity[name] = { size: got.size, ino: got.ino, mtimeMs: got.mtimeMs };
  }
  const noted = await readFile(join(dir, VERIFIED), 'utf8').then(
    (t) => t.trim(),
    () => undefined,
  );
  if (noted === JSON.stringify(identity)) return true;
  for (const name of build.binaries) {
    if ((await sha256(join(dir, name))) !== record.files[name]?.sha256) return false;
  }
  // Written whole and renamed: another process reading it sees the old note or the new one.
  const temp = join(dir, `${VERIFIED}.${process.pid}`);
  await writeFile(temp, `${JSON.stringify(identity)}\n`)
    .then(() => rename(temp, join(dir, VERIFIED)))
    .catch(() => rm(temp, { force: true }));
  return true;
}

/**
 * The cache directory of `build` for the Go in use: keyed by the release, the Go version, and a digest of the
 * module's files (go.mod, go.sum and a program's own sources) and of the build flags: a binary built from
 * other sources or flags is another binary.
 */
export async function buildDir(build: GoModuleBuild): Promise<string> {
  const dir = join(toolsDir(), build.module);
  const files = (await readdir(dir).catch(() => [] as string[]))
    .filter((f) => f === 'go.mod' || f === 'go.sum' || f.endsWith('.go'))
    .sort();
  if (!files.includes('go.sum'))
    throw new ControlPlaneError(`tools/${build.module}/go.sum is missing: the wrapper module is incomplete`);
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update(await readFile(join(dir, file)));
  const digest = hash
    .update(
      JSON.stringify({
        ldflags: build.ldflags ?? [],
        renames: build.renames ?? {},
        // Only when set, so that the builds without tags keep the cache keys they had.
        ...(build.tags !== undefined && build.tags.length > 0 ? { tags: build.tags } : {}),
      }),
    )
    .digest('hex')
    .slice(0, 12);
  return join(cacheRoot(), 'bin', `${build.module}-${build.version}-${await goVersion()}-${digest}`);
}

/**
 * The paths of `build`'s binaries (name → path), building them first when the cache has no verified copy.
 * A failed build throws a ControlPlaneError naming the step and its log.
 */
export async function ensureGoBuild(
  build: GoModuleBuild,
  log: (line: string) => void = () => {},
): Promise<Record<string, string>> {
  const dir = await buildDir(build);
  const paths = Object.fromEntries(build.binaries.map((b) => [b, join(dir, b)]));
  if (await verified(dir, build)) return paths;

  const root = cacheRoot();
  await mkdir(join(root, 'logs'), { recursive: true });
  const lock = await acquireFileLock(join(root, `build-${build.module}.lock`), {
    onWait: (pid) => log(`waiting for another process (pid ${pid}) that is building ${build.module}...`),
  });
  try {
    if (await verified(dir, build)) return paths;
    await removeAbandonedBuilds(dir);
    await compile(build, dir, log);
    return paths;
  } finally {
    await lock.release();
  }
}

/** Removes `<dir>.partial-<pid>` directories of builds whose process died (a kill during a build). */
async function removeAbandonedBuilds(dir: string): Promise<void> {
  const prefix = `${basename(dir)}.partial-`;
  for (const name of await readdir(dirname(dir)).catch(() => [] as string[])) {
    if (name.startsWith(prefix) && !pidAlive(Number(name.slice(prefix.length))))
      await rm(join(dirname(dir), name), { recursive: true, force: true });
  }
}

async function compile(build: GoModuleBuild, dir: string, log: (line: string) => void): Promise<void> {
  const logFile = join(
    cacheRoot(),
    'logs',
    `build-${build.module}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`,
  );
  const work = `${dir}.partial-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  log(
    `building ${build.binaries.join(', ')} ${build.version} from the Go module proxy (tools/${build.module}); once per version, log: ${logFile}`,
  );
  const started = Date.now();
  const heartbeat = setInterval(
    () => log(`  still building ${build.module} (${Math.round((Date.now() - started) / 1000)} s)...`),
    30_000,
  );
  let watchdog: Watchdog | undefined;
  let code: number;
  try {
    code = await runLogged(
      'go',
      [
        'build',
        '-trimpath',
        ...((build.tags ?? []).length > 0 ? ['-tags', (build.tags ?? []).join(',')] : []),
        '-ldflags',
        ['-s', '-w', ...(build.ldflags ?? [])].join(' '),
        '-o',
        `${work}/`,
        'tool',
      ],
      {
        logFile,
        cwd: join(toolsDir(), build.module),
        env: goEnv(),
        // go and its compilers must not outlive us (Ctrl-C, SIGKILL): a later build would race them.
        ownProcessGroup: true,
        onSpawn: (pid) => (watchdog = startWatchdog(process.pid, [pid], '')),
      },
    );
  } finally {
    clearInterval(heartbeat);
    await watchdog?.dismiss();
  }
  if (code !== 0) {
    await rm(work, { recursive: true, force: true });
    throw new ControlPlaneError(`go build in tools/${build.module} failed (exit ${code})`, logFile);
  }
  for (const [from, to] of Object.entries(build.renames ?? {}))
    await rename(join(work, from), join(work, to)).catch(() => undefined);
  const files: CompleteRecord['files'] = {};
  for (const name of build.binaries) {
    const path = join(work, name);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined)
      throw new ControlPlaneError(
        `go build in tools/${build.module} wrote no ${name}: is it a tool line of its go.mod?`,
        logFile,
      );
    if (build.versionCheck !== undefined) {
      const r = await capture(path, build.versionCheck.args(name));
      if (!`${r.stdout}${r.stderr}`.includes(build.versionCheck.expect)) {
        throw new ControlPlaneError(
          `the built ${name} reports "${(r.stdout || r.stderr).trim()}", expected ${build.versionCheck.expect}`,
          logFile,
        );
      }
    }
    files[name] = { size: info.size, sha256: await sha256(path) };
  }
  const record: CompleteRecord = {
    version: build.version,
    goVersion: await goVersion(),
    builtAt: new Date().toISOString(),
    buildSeconds: Math.round((Date.now() - started) / 1000),
    files,
  };
  await writeFile(join(work, COMPLETE), `${JSON.stringify(record, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(work, dir);
  log(`built ${build.module} in ${record.buildSeconds} s`);
}
