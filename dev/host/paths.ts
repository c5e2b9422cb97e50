import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the built kube-apiserver, the private apt state and the per-run directories live: outside the repo,
 * so a fresh clone or `git clean` never throws away a five-minute build. `EO_CACHE_DIR` overrides it.
 */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const override = env['EO_CACHE_DIR'];
  if (override !== undefined && override !== '') return override;
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'endpoint-operator');
}

/** Each running control plane registers its pid file here, so the next start can clean up after a SIGKILL. */
export function runsDir(root: string = cacheRoot()): string {
  return join(root, 'runs');
}

/** The root of this checkout or installed package: the directory above dev/ (or above dist/dev/ once compiled). */
export function packageRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return fileURLToPath(
    here.includes('/dist/dev/') ? new URL('../../../', import.meta.url) : new URL('../../', import.meta.url),
  );
}
