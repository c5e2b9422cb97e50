import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { debSrcLines, parseDeb822Sources, parseOneLineSources, parsePrintUris } from './deb-sources.js';
import { ControlPlaneError } from './errors.js';
import { capture, runLogged } from './exec.js';

/**
 * Fetches Debian's `kubernetes` source package through a PRIVATE apt configuration (its own sources.list,
 * lists and cache under `aptDir`), so the machine's /etc/apt and its package lists are never touched.
 */
export class KubernetesSource {
  constructor(
    private readonly aptDir: string,
    private readonly logFile: string,
  ) {}

  private options(): string[] {
    return [
      '-o', `Dir::Etc::SourceList=${join(this.aptDir, 'sources.list')}`,
      '-o', `Dir::Etc::SourceParts=${join(this.aptDir, 'sources.list.d')}`,
      '-o', `Dir::State::Lists=${join(this.aptDir, 'lists')}`,
      '-o', `Dir::Cache=${join(this.aptDir, 'cache')}`,
      // Downloads land in our own root-owned directories, which the _apt sandbox user cannot write.
      '-o', 'APT::Sandbox::User=root',
    ];
  }

  /** Writes the private deb-src list (derived from the machine's bookworm deb lines) and runs apt-get update. */
  async update(): Promise<void> {
    const lines = debSrcLines(await machineAptRepos());
    if (lines.length === 0) {
      throw new ControlPlaneError(
        'no Debian bookworm "deb" line with component main in /etc/apt/sources.list or /etc/apt/sources.list.d: ' +
          'the local control plane builds kube-apiserver from Debian bookworm\'s kubernetes source package',
      );
    }
    for (const dir of ['sources.list.d', 'lists/partial', 'cache/archives/partial']) await mkdir(join(this.aptDir, dir), { recursive: true });
    await writeFile(join(this.aptDir, 'sources.list'), `${lines.join('\n')}\n`);
    const code = await runLogged('apt-get', [...this.options(), 'update'], { logFile: this.logFile });
    if (code !== 0) throw new ControlPlaneError('apt-get update of the private deb-src list failed: is the Debian archive reachable?', this.logFile);
  }

  /** The .dsc of the source package apt would fetch: its file name (carries the version) and SHA-256. */
  async describe(pkg = 'kubernetes'): Promise<{ dscName: string; dscSha256: string }> {
    const result = await capture('apt-get', [...this.options(), 'source', '--print-uris', pkg]);
    const dsc = parsePrintUris(result.stdout).find((u) => u.fileName.endsWith('.dsc'));
    if (result.code !== 0 || dsc?.sha256 === undefined) {
      throw new ControlPlaneError(`apt-get source --print-uris ${pkg} found no .dsc with a SHA-256: ${result.stderr.trim() || result.stdout.trim()}`);
    }
    return { dscName: dsc.fileName, dscSha256: dsc.sha256 };
  }

  /** Downloads (checksums verified by apt against the signed index) and unpacks it; returns the source tree. */
  async fetch(intoDir: string, pkg = 'kubernetes'): Promise<string> {
    await mkdir(intoDir, { recursive: true });
    const code = await runLogged('apt-get', [...this.options(), 'source', pkg], { logFile: this.logFile, cwd: intoDir });
    if (code !== 0) throw new ControlPlaneError(`apt-get source ${pkg} failed`, this.logFile);
    const tree = (await readdir(intoDir, { withFileTypes: true })).find((e) => e.isDirectory() && e.name.startsWith(`${pkg}-`));
    if (!tree) throw new ControlPlaneError(`apt-get source ${pkg} unpacked no ${pkg}-* directory in ${intoDir}`, this.logFile);
    return join(intoDir, tree.name);
  }
}

async function machineAptRepos(): Promise<ReturnType<typeof parseOneLineSources>> {
  const repos = parseOneLineSources(await readFile('/etc/apt/sources.list', 'utf8').catch(() => ''));
  const dir = '/etc/apt/sources.list.d';
  const entries = await readdir(dir).catch(() => [] as string[]);
  for (const name of entries.sort()) {
    if (name.endsWith('.list')) repos.push(...parseOneLineSources(await readFile(join(dir, name), 'utf8')));
    else if (name.endsWith('.sources')) repos.push(...parseDeb822Sources(await readFile(join(dir, name), 'utf8')));
  }
  return repos;
}
