/**
 * A debootstrapped root filesystem cut down to the Debian packages a program needs, as distroless images are made:
 * the dependency closure (Depends and Pre-Depends, through Provides) of a few named packages stays, every other
 * package's files go, and dpkg's database is rewritten to list only what stays, so `dpkg -l` (and an image
 * scanner) in the image tells the truth. Used by the model servers' Python base (python-base.ts): minbase's
 * perl, coreutils, util-linux, apt, bash, login and the like are about 49 MB that no model server runs.
 */
import { readdir, readFile, realpath, rm, lstat, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface DpkgPackage {
  readonly name: string;
  /** Each dependency as its alternatives' package names, in order (Depends and Pre-Depends). */
  readonly depends: readonly (readonly string[])[];
  readonly provides: readonly string[];
  /** The package's stanza in the status file, as it was. */
  readonly stanza: string;
}

function field(stanza: string, name: string): string {
  const m = new RegExp(`^${name}:(.*(?:\\n[ \\t].*)*)`, 'm').exec(stanza);
  return m?.[1]?.replace(/\n[ \t]/g, ' ').trim() ?? '';
}

function names(list: string): string[] {
  return list
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
}

/** The packages of a dpkg status file. */
export function parseDpkgStatus(text: string): DpkgPackage[] {
  return text
    .split(/\n\n+/)
    .filter((stanza) => field(stanza, 'Package') !== '')
    .map((stanza) => ({
      name: field(stanza, 'Package'),
      depends: [...names(field(stanza, 'Pre-Depends')), ...names(field(stanza, 'Depends'))].map((dep) =>
        dep.split('|').map((alt) => alt.trim().split(/[\s(:]/)[0] ?? ''),
      ),
      provides: names(field(stanza, 'Provides')).map((p) => p.split(/[\s(]/)[0] ?? ''),
      stanza: stanza.trim(),
    }));
}

/**
 * The names of `roots` and everything they depend on among `installed`: of a dependency's alternatives, the first
 * installed (or provided by an installed package). Throws when a root is not installed.
 */
export function dependencyClosure(installed: readonly DpkgPackage[], roots: readonly string[]): Set<string> {
  const byName = new Map(installed.map((p) => [p.name, p]));
  const providers = new Map<string, string>();
  for (const p of installed) for (const v of p.provides) if (!providers.has(v)) providers.set(v, p.name);
  const keep = new Set<string>();
  const todo = [...roots];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (keep.has(name)) continue;
    const pkg = byName.get(name);
    if (pkg === undefined) throw new Error(`${name} is not installed in the root filesystem`);
    keep.add(name);
    for (const alternatives of pkg.depends) {
      const found = alternatives.map((a) => (byName.has(a) ? a : providers.get(a))).find((a) => a !== undefined);
      if (found !== undefined) todo.push(found);
    }
  }
  return keep;
}

/**
 * Removes from `rootfs` the files of every package outside the closure of `roots`, then their dpkg records.
 * Directories stay (a kept package may own or use them), and so does any path that is, through the merged-/usr
 * links, the same file as a kept package's.
 */
export async function keepOnlyClosure(rootfs: string, roots: readonly string[]): Promise<string[]> {
  const statusFile = join(rootfs, 'var/lib/dpkg/status');
  const installed = parseDpkgStatus(await readFile(statusFile, 'utf8'));
  const keep = dependencyClosure(installed, roots);
  const infoDir = join(rootfs, 'var/lib/dpkg/info');
  const info = await readdir(infoDir);
  const listed = async (pkg: string): Promise<string[]> => {
    const list = info.find((f) => f === `${pkg}.list` || (f.startsWith(`${pkg}:`) && f.endsWith('.list')));
    if (list === undefined) return [];
    return (await readFile(join(infoDir, list), 'utf8')).split('\n').filter((l) => l.startsWith('/'));
  };
  // A path as the file it names: its directory resolved (bin -> usr/bin), its last part as it is.
  const canonical = async (path: string): Promise<string> => {
    const dir = await realpath(join(rootfs, dirname(path))).catch(() => join(rootfs, dirname(path)));
    return join(dir, basename(path));
  };
  const kept = new Set<string>();
  for (const pkg of keep) for (const path of await listed(pkg)) kept.add(await canonical(path));
  const removed = installed.filter((p) => !keep.has(p.name)).map((p) => p.name);
  for (const pkg of removed) {
    for (const path of await listed(pkg)) {
      const file = await canonical(path);
      if (kept.has(file)) continue;
      const st = await lstat(file).catch(() => undefined);
      if (st === undefined || st.isDirectory()) continue;
      if (st.isSymbolicLink() && (await stat(file).catch(() => undefined))?.isDirectory() === true) continue;
      await rm(file, { force: true });
    }
    // `<package>[:<arch>].<what>`: python3's are not python3.11's.
    for (const f of info.filter((f) => f.slice(0, f.lastIndexOf('.')).split(':')[0] === pkg))
      await rm(join(infoDir, f), { force: true });
  }
  const stanzas = installed.filter((p) => keep.has(p.name)).map((p) => p.stanza);
  await writeFile(statusFile, `${stanzas.join('\n\n')}\n`);
  return removed;
}
