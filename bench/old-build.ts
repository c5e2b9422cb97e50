/**
 * An earlier commit of this repository compiled in a directory of its own, for benchmarks that compare this
 * checkout with it in one run (B6-old-new, B4-old-new): exported with `git archive` and compiled with this
 * checkout's TypeScript and node_modules (the lock file is the same), once per commit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The commit compiled (reused when already built); its root, with a trailing slash. */
export function buildOld(commit: string): string {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${commit}^{commit}`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  }).trim();
  const root = join(tmpdir(), `eo-bench-gateway-${sha.slice(0, 12)}`);
  const built = existsSync(join(root, 'dist/src/main.js'));
  if (!built) {
    mkdirSync(root, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${root}"`], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  // The old tree runs on this checkout's node_modules: a build reused from another checkout (since removed) links to its own.
  rmSync(join(root, 'node_modules'), { force: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  if (built) return `${root}/`;
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  return `${root}/`;
}
