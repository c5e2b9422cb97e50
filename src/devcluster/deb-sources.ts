/**
 * Derives the deb-src lines for Debian's `kubernetes` source package from the machine's own apt sources,
 * so the source comes from the same (possibly pinned or mirrored) archive the machine already trusts.
 * Pure: the caller reads the files.
 */
export interface AptRepo {
  readonly uri: string;
  readonly suite: string;
  readonly components: readonly string[];
  readonly signedBy?: string;
}

/** Parses one-line `sources.list` text: `deb [opt=value ...] URI SUITE COMPONENT...`. */
export function parseOneLineSources(text: string): AptRepo[] {
  const repos: AptRepo[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const match = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, options = '', uri = '', suite = '', comps = ''] = match;
    const signedBy = /(?:^|\s)signed-by=(\S+)/.exec(options)?.[1];
    repos.push({ uri, suite, components: comps.split(/\s+/).filter(Boolean), ...(signedBy ? { signedBy } : {}) });
  }
  return repos;
}

/** Parses deb822 `.sources` text (apt's newer format, the default on bookworm containers). */
export function parseDeb822Sources(text: string): AptRepo[] {
  const repos: AptRepo[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    let current: string | undefined;
    for (const line of paragraph.split('\n')) {
      if (line.startsWith('#')) continue;
      if (/^\s/.test(line) && current !== undefined) {
        // Continuation line: only an inline key block has these, which a one-line entry cannot carry.
        fields.set(current, `${fields.get(current) ?? ''}\n${line.trim()}`);
        continue;
      }
      const field = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
      if (!field) continue;
      current = (field[1] ?? '').toLowerCase();
      fields.set(current, (field[2] ?? '').trim());
    }
    const types = (fields.get('types') ?? '').split(/\s+/);
    if (!types.includes('deb') || /^(no|false)$/i.test(fields.get('enabled') ?? '')) continue;
    const signed = fields.get('signed-by');
    const signedBy = signed !== undefined && signed !== '' && !signed.includes('\n') ? signed : undefined;
    const components = (fields.get('components') ?? '').split(/\s+/).filter(Boolean);
    for (const uri of (fields.get('uris') ?? '').split(/\s+/).filter(Boolean)) {
      for (const suite of (fields.get('suites') ?? '').split(/\s+/).filter(Boolean)) {
        repos.push({ uri, suite, components, ...(signedBy ? { signedBy } : {}) });
      }
    }
  }
  return repos;
}

/**
 * The deb-src lines for every `main` repository of the given release (bookworm, bookworm-updates,
 * bookworm-security): apt picks the newest `kubernetes` source among them, as it would for binaries.
 */
export function debSrcLines(repos: readonly AptRepo[], release = 'bookworm'): string[] {
  const lines = new Set<string>();
  for (const repo of repos) {
    if (repo.suite !== release && !repo.suite.startsWith(`${release}-`)) continue;
    if (!repo.components.includes('main')) continue;
    const options = repo.signedBy ? `[signed-by=${repo.signedBy}] ` : '';
    lines.add(`deb-src ${options}${repo.uri} ${repo.suite} main`);
  }
  return [...lines];
}

export interface SourceUri {
  readonly url: string;
  readonly fileName: string;
  readonly size: number;
  readonly sha256?: string;
}

/** Parses `apt-get source --print-uris` lines: `'URL' FILE SIZE SHA256:HEX`. */
export function parsePrintUris(text: string): SourceUri[] {
  const uris: SourceUri[] = [];
  for (const line of text.split('\n')) {
    const match = /^'([^']+)'\s+(\S+)\s+(\d+)(?:\s+(\S+))?/.exec(line.trim());
    if (!match) continue;
    const sha = /^SHA256:([0-9a-f]{64})$/i.exec(match[4] ?? '')?.[1];
    uris.push({ url: match[1] ?? '', fileName: match[2] ?? '', size: Number(match[3]), ...(sha ? { sha256: sha.toLowerCase() } : {}) });
  }
  return uris;
}
