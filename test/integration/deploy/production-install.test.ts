/**
 * What the Dockerfile's runtime stage does, without a container engine: a production install
 * (`npm ci --omit=dev --omit=optional --ignore-scripts`, then `npm rebuild argon2` from source) of package*.json next
 * to a fresh build and bin/, then the CLI run from there. Proves the image needs no dev dependency
 * and no other install script, and that the commands write nothing into the app directory, which is
 * read-only in the pod.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/examples.js';

const app = mkdtempSync(join(tmpdir(), 'eo-prod-install-'));

function run(command: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(command, args, { cwd: app, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, NODE_ENV: 'production', ...env } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: `${r.stderr}${r.error ? String(r.error) : ''}${r.signal ? ` (killed by ${r.signal})` : ''}` };
}

/** Every path under the app directory with its size and mtime: any write shows up as a difference. */
function snapshot(dir: string, prefix = ''): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    const st = statSync(path);
    const key = `${prefix}${name}`;
    return st.isDirectory() ? [key, ...snapshot(path, `${key}/`)] : [`${key} ${st.size} ${st.mtimeMs}`];
  });
}

beforeAll(() => {
  for (const f of ['package.json', 'package-lock.json']) cpSync(join(REPO_ROOT, f), join(app, f));
  cpSync(join(REPO_ROOT, 'bin'), join(app, 'bin'), { recursive: true });
  // A fresh build (as the image's build stage makes), not whatever dist/ the working tree holds.
  const tsc = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', join(app, 'dist')], { encoding: 'utf8', timeout: 240_000 });
  if (tsc.status !== 0) throw new Error(`tsc failed (${tsc.status}): ${tsc.stdout}${tsc.stderr}`);
  // --prefer-offline: the packages are in this machine's npm cache; the registry is asked only for a miss.
  const ci = run('npm', ['ci', '--omit=dev', '--omit=optional', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], 240_000);
  if (ci.code !== 0) throw new Error(`npm ci --omit=dev failed (${ci.code}): ${ci.stderr}`);
  // As the Dockerfile's deps stage: argon2 compiled here, because its prebuilt binary segfaults on
  // load on some hosts (this one among them) and --ignore-scripts skipped its install script.
  const rebuild = run('npm', ['rebuild', 'argon2'], 240_000, { npm_config_build_from_source: 'true' });
  if (rebuild.code !== 0) throw new Error(`npm rebuild argon2 failed (${rebuild.code}): ${rebuild.stderr}`);
}, 600_000);

afterAll(() => {
  rmSync(app, { recursive: true, force: true });
});

describe('a production install (the image runtime stage)', () => {
  it('holds the runtime dependencies and none of the dev ones', () => {
    for (const dev of ['vitest', 'typescript', 'tsx', 'eslint', 'fast-check', '@marcbachmann/cel-js']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    for (const dep of ['argon2', 'fastify', 'zod']) expect(existsSync(join(app, 'node_modules', dep)), dep).toBe(true);
    // Optional, for kubeconfig auth-provider users only (imported on demand): the image leaves it out.
    expect(existsSync(join(app, 'node_modules/@kubernetes/client-node'))).toBe(false);
  });

  it('loads argon2 built without any other install script, and hashes with it', () => {
    const r = run(process.execPath, ['--input-type=module', '-e', "const a = await import('argon2'); const h = await a.hash('s3cret'); console.log(h.startsWith('$argon2id$'), await a.verify(h, 's3cret'))"], 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('true true');
  });

  it('tells an auth-provider kubeconfig user without the optional @kubernetes/client-node what to install', () => {
    const script = [
      "const { ClientNodeAuthProvider } = await import('./dist/src/kube/credentials.js');",
      "const user = { name: 'legacy', file: '/k', authProvider: { name: 'gcp', config: {} } };",
      "const cluster = { name: 'c', file: '/k', server: 'https://k', insecureSkipTlsVerify: false };",
      'await new ClientNodeAuthProvider(user, cluster).credentials(false);',
    ].join('\n');
    const r = run(process.execPath, ['--input-type=module', '-e', script], 30_000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('users[legacy].user.auth-provider (gcp) in /k needs the optional package @kubernetes/client-node, which is not installed: run `npm install @kubernetes/client-node@~1.4.0`');
  });

  it('runs the CLI: help, run --help, validate of a valid and an invalid example, without writing to its directory', () => {
    const before = snapshot(app);
    // HOME=/nonexistent: like the pod, where only /tmp is writable.
    const env = { HOME: '/nonexistent' };
    const help = run(process.execPath, ['bin/endpoint-operator.js', '--help'], 30_000, env);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('run');
    // The product's build holds no development tree, and its binary points at it.
    expect(existsSync(join(app, 'dist/dev'))).toBe(false);
    const dev = run(process.execPath, ['bin/endpoint-operator.js', 'dev'], 30_000, env);
    expect(dev.code).toBe(2);
    expect(dev.stderr).toContain('"dev" is part of the development tree (dev/), not of this binary');

    const runHelp = run(process.execPath, ['bin/endpoint-operator.js', 'run', '--help'], 30_000, env);
    expect(runHelp.code, runHelp.stderr).toBe(0);
    for (const flag of ['--project', '--leader-elect', '--webhook-port', '--signin-namespace']) expect(runHelp.stdout).toContain(flag);

    const valid = run(process.execPath, ['bin/endpoint-operator.js', 'validate', '-f', join(REPO_ROOT, 'examples/valid/prediction')], 30_000, env);
    expect(valid.code, `${valid.stdout}${valid.stderr}`).toBe(0);
    const invalid = run(process.execPath, ['bin/endpoint-operator.js', 'validate', '-f', join(REPO_ROOT, 'examples/invalid/prediction/dm-automatic-min-replicas-zero.yaml')], 30_000, env);
    expect(invalid.code, `${invalid.stdout}${invalid.stderr}`).toBe(1);

    expect(snapshot(app)).toEqual(before);
  });
});
