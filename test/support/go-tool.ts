/**
 * Builds the tests' small Go program argo-health with Debian's Go in GOPATH mode
 * from Debian's /usr/share/gocode, so nothing is downloaded: the missing Debian packages are
 * installed like the control plane's (src/devcluster/apt.ts, under its lock), and the binary is
 * cached under ~/.cache/endpoint-operator keyed by the program's source and the package versions it
 * was built from, so only the first run pays for the build.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackages } from '../../src/devcluster/apt.js';
import { ControlPlaneError } from '../../src/devcluster/errors.js';
import { capture, runLogged } from '../../src/devcluster/exec.js';
import { acquireFileLock } from '../../src/devcluster/file-lock.js';
import { cacheRoot } from '../../src/devcluster/paths.js';

const GOCODE = '/usr/share/gocode';

export interface GoTool {
  /** The program's name: its binary, its cache directory, lock and log are named after it. */
  readonly name: string;
  /** The directory holding its sources. */
  readonly sourceDir: string;
  readonly sourceFiles: readonly string[];
  /** Debian packages it builds from (golang-go and the libraries' -dev packages). */
  readonly packages: readonly string[];
}

async function exists(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** The path of `tool`'s binary, built now (under a lock, once per source) when not cached. */
export async function ensureGoTool(tool: GoTool, log: (line: string) => void = () => {}): Promise<string> {
  const root = cacheRoot();
  await mkdir(join(root, 'logs'), { recursive: true });
  const logFile = join(root, 'logs', `${tool.name}.log`);
  await ensureDebianPackages(tool.packages, log, logFile);
  const versions = await capture('dpkg-query', ['-W', '-f=${Package} ${Version}\n', ...tool.packages]);
  const hash = createHash('sha256').update(versions.stdout);
  for (const file of tool.sourceFiles) hash.update(file).update(await readFile(join(tool.sourceDir, file)));
  const key = hash.digest('hex').slice(0, 16);
  const binary = join(root, `${tool.name}-${key}`, tool.name);
  if (await exists(binary)) return binary;

  const lock = await acquireFileLock(join(root, `${tool.name}.lock`), {
    onWait: (pid) => log(`waiting for pid ${pid} to build ${tool.name}...`),
  });
  try {
    if (await exists(binary)) return binary;
    const work = await mkdtemp(join(tmpdir(), `eo-${tool.name}-`));
    try {
      // GOPATH mode: Debian's Go sources resolve from /usr/share/gocode, nothing is downloaded. The
      // program sits in a GOPATH of its own because the go command maps a `/v3` import to Debian's
      // unversioned tree only for importing code inside a GOPATH with a go.mod.
      const pkg = join(work, 'src', tool.name);
      await mkdir(pkg, { recursive: true });
      for (const file of tool.sourceFiles) await copyFile(join(tool.sourceDir, file), join(pkg, file));
      const env = {
        ...process.env,
        GO111MODULE: 'off',
        GOPATH: `${work}:${GOCODE}`,
        GOFLAGS: '',
        CGO_ENABLED: '0',
        PATH: `/usr/lib/go/bin:${process.env['PATH'] ?? ''}`,
      };
      const code = await runLogged('go', ['build', '-o', join(work, tool.name), '.'], { logFile, env, cwd: pkg });
      if (code !== 0)
        throw new ControlPlaneError(
          `building ${join(tool.sourceDir, 'main.go')} failed (go build exit ${code})`,
          logFile,
        );
      await mkdir(join(binary, '..'), { recursive: true });
      await rename(join(work, tool.name), binary); // atomic: a reader never sees half a binary
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return binary;
  } finally {
    await lock.release();
  }
}
