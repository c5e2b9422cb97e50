import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../support/examples.js';

// The issue names "not root" among the failures that must end with a clear message. The check
// reads the real uid, so the test runs the installer as the unprivileged `nobody` (when it can).
const runuser = spawnSync('sh', ['-c', 'command -v runuser'], { encoding: 'utf8' }).stdout.trim();
const canDropRoot = process.getuid?.() === 0 && runuser !== '';

const SRC_ROOT = REPO_ROOT;

/**
 * Copies `entry` and every module it imports by relative path, transpiled to JavaScript, into
 * `outDir` (same layout under src/). `nobody` runs the copy: the clone itself may sit in a
 * directory only root can enter (`mktemp -d` makes them 0700), and so may its node_modules
 * with tsx in it. A package import would need node_modules staged too: the test says so.
 */
function stageModule(entry: string, outDir: string): string {
  const pending = [resolve(entry)];
  const staged = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (staged.has(file)) continue;
    staged.add(file);
    const source = readFileSync(file, 'utf8');
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      if (fileName.startsWith('node:')) continue;
      if (!fileName.startsWith('.'))
        throw new Error(
          `${relative(REPO_ROOT, file)} imports the package ${fileName}: stage its node_modules for nobody too`,
        );
      pending.push(resolve(dirname(file), fileName.replace(/\.js$/, '.ts')));
    }
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: file,
    });
    const out = join(outDir, relative(SRC_ROOT, file).replace(/\.ts$/, '.js'));
    mkdirSync(dirname(out), { recursive: true, mode: 0o755 });
    writeFileSync(out, outputText, { mode: 0o644 });
  }
  return join(outDir, relative(SRC_ROOT, entry).replace(/\.ts$/, '.js'));
}

function asNobody(args: readonly string[], cwd: string) {
  return spawnSync(runuser, ['-u', 'nobody', '--', 'env', 'HOME=/tmp', ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('installing the control plane packages without root', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eo-not-root-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.skipIf(!canDropRoot)(
    'fails with a message that says root is needed and what to install',
    (ctx) => {
      chmodSync(dir, 0o755); // mkdtemp makes it 0700: nobody could not read the probe
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n', { mode: 0o644 });
      const apt = stageModule(join(SRC_ROOT, 'dev/host/apt.ts'), dir);
      const probe = join(dir, 'probe.js');
      writeFileSync(
        probe,
        `import { ensureDebianPackages } from ${JSON.stringify(apt)};
try { await ensureDebianPackages(['eo-no-such-package'], () => {}, '/dev/null'); console.log('installed?'); }
catch (e) { console.log(e.name + ': ' + e.message); }
`,
        { mode: 0o644 },
      );
      // The one thing staging cannot fix: a TMPDIR inside a directory nobody may enter.
      const reachable = asNobody(['test', '-r', probe], dir);
      ctx.skip(
        reachable.status !== 0,
        `nobody cannot read ${probe} (TMPDIR=${tmpdir()} sits in a directory closed to other users)`,
      );

      const r = asNobody([process.execPath, probe], dir);
      expect(r.stdout, r.stderr).toContain(
        'ControlPlaneError: installing the Debian packages eo-no-such-package needs root',
      );
      expect(r.stdout).toContain('apt-get install eo-no-such-package');
    },
    60_000,
  );
});
