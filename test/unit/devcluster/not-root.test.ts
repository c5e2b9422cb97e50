import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/examples.js';

// The issue names "not root" among the failures that must end with a clear message. The check
// reads the real uid, so the test runs the installer as the unprivileged `nobody` (when it can).
const runuser = spawnSync('sh', ['-c', 'command -v runuser'], { encoding: 'utf8' }).stdout.trim();
const canDropRoot = process.getuid?.() === 0 && runuser !== '';

describe('installing the control plane packages without root', () => {
  it.skipIf(!canDropRoot)('fails with a message that says root is needed and what to install', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eo-not-root-'));
    chmodSync(dir, 0o755); // mkdtemp makes it 0700: nobody could not read the probe
    const script = join(dir, 'probe.mts');
    writeFileSync(
      script,
      `import { ensureDebianPackages } from ${JSON.stringify(join(REPO_ROOT, 'src/devcluster/apt.ts'))};
try { await ensureDebianPackages(['eo-no-such-package'], () => {}, '/dev/null'); console.log('installed?'); }
catch (e) { console.log(e.name + ': ' + e.message); }
`,
      { mode: 0o644 },
    );
    const tsx = join(REPO_ROOT, 'node_modules/tsx/dist/esm/index.mjs');
    const r = spawnSync(runuser, ['-u', 'nobody', '--', 'env', 'HOME=/tmp', process.execPath, '--import', tsx, script], { encoding: 'utf8', timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(r.stdout, r.stderr).toContain('ControlPlaneError: the local control plane needs the Debian packages eo-no-such-package, and installing them needs root');
    expect(r.stdout).toContain('apt-get install eo-no-such-package');
  }, 60_000);
});
