/**
 * What stops the real node on a machine that could run it, found before anything is built or started, each as
 * one line naming the cause and the fix: a fixed port of the node's (the kubelet's 10250, the registry's 5000,
 * kube-proxy's) held by another program or by a daemon a killed run left behind, and a disk too full for the
 * image store. The decisions are pure (unit-tested); nodePreflight reads /proc and the file system.
 */
import { statfs } from 'node:fs/promises';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { REGISTRY_PORT } from './node-config.js';
import { NODE_HOST_ADDRESS } from './node-network.js';

export interface FixedPort {
  readonly what: string;
  readonly address: string;
  readonly port: number;
}

/** The node's ports in this machine's network namespace, which nothing moves (node-config.ts says why each is fixed). */
export const NODE_FIXED_PORTS: readonly FixedPort[] = [
  { what: "the real node's kubelet", address: '127.0.0.1', port: 10250 },
  { what: "the real node's image registry", address: NODE_HOST_ADDRESS, port: REGISTRY_PORT },
  { what: "the real node's kube-proxy (health)", address: '127.0.0.1', port: 10256 },
  { what: "the real node's kube-proxy (metrics)", address: '127.0.0.1', port: 10249 },
];

/**
 * The free space the real node's start needs where its image store and registry live: the model server's image
 * is about 1 GB unpacked, held once compressed by the registry and by containerd's content store and once
 * unpacked by its snapshotter.
 */
export const NEEDED_FREE_BYTES = 2 * 1024 ** 3;

/** `0100007F` (little-endian IPv4) or 32 hex digits (IPv6, four little-endian words) as text. */
export function decodeProcAddress(hex: string): string {
  if (hex.length === 8) {
    const n = Number.parseInt(hex, 16);
    return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join('.');
  }
  const words = hex.toLowerCase().match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) => (w.match(/../g) ?? []).reverse());
  const groups = Array.from({ length: 8 }, (_, i) => `${bytes[2 * i] ?? '00'}${bytes[2 * i + 1] ?? '00'}`);
  if (groups.slice(0, 5).every((g) => g === '0000') && groups[5] === 'ffff') {
    const v4 = bytes.slice(12).map((b) => Number.parseInt(b, 16));
    return `::ffff:${v4.join('.')}`;
  }
  return groups.map((g) => Number.parseInt(g, 16).toString(16)).join(':');
}

const WILDCARDS = new Set(['0.0.0.0', '0:0:0:0:0:0:0:0']);

/**
 * The socket inodes of /proc/net/tcp{,6} text listening where a bind to `address`:`port` would collide: on that
 * address, its IPv4-mapped form, or a wildcard.
 */
export function listenersBlocking(procNetTcp: string, address: string, port: number): string[] {
  const inodes: string[] = [];
  for (const line of procNetTcp.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    const [local, state, inode] = [cols[1], cols[3], cols[9]];
    if (local === undefined || state !== '0A' || inode === undefined) continue;
    const [hex = '', portHex = ''] = local.split(':');
    if (Number.parseInt(portHex, 16) !== port) continue;
    const addr = decodeProcAddress(hex);
    if (addr === address || addr === `::ffff:${address}` || WILDCARDS.has(addr)) inodes.push(inode);
  }
  return inodes;
}

export interface PortHolder {
  readonly pid: number;
  /** The holder's executable (readlink /proc/PID/exe), when readable. */
  readonly exe: string | undefined;
  /** Its command line, spaces for NULs, shortened. */
  readonly command: string;
}

/**
 * One line for a fixed port that is taken. A holder running one of this project's own builds (under
 * `binDir`) is a daemon of a real node whose run was killed with its watchdogs; anything else is another
 * program, which the user stops (the port cannot move: the apiserver dials kubelets on 10250, images name
 * the registry's address).
 */
export function portTakenLine(p: FixedPort, holder: PortHolder | undefined, binDir: string): string {
  const where = `port ${p.port} on ${p.address} (${p.what})`;
  if (holder === undefined)
    return `${where} is in use by a process this user cannot see: free it, or start with --simulated-nodes`;
  if (holder.exe !== undefined && holder.exe.startsWith(`${binDir}/`))
    return `${where} is held by pid ${holder.pid} (${holder.command}), left by a real node whose run was killed: end it with \`kill ${holder.pid}\` and start again`;
  return `${where} is in use by pid ${holder.pid} (${holder.command}): stop that program (the port is fixed), or start with --simulated-nodes`;
}

/** One line when `freeBytes` at `path` is below what the node needs, naming what can be deleted. */
export function diskSpaceLine(
  path: string,
  freeBytes: number,
  keptStores: readonly string[],
  needBytes = NEEDED_FREE_BYTES,
): string | undefined {
  if (freeBytes >= needBytes) return undefined;
  const gb = (n: number): string => (n / 1e9).toFixed(1);
  return (
    `only ${gb(freeBytes)} GB free on the file system of ${path} (the real node's images need ${gb(needBytes)} GB): ` +
    `free space there (the kept image stores can go: rm -rf ${keptStores.join(' ')}), or start with --simulated-nodes`
  );
}

async function holderOf(inodes: readonly string[]): Promise<PortHolder | undefined> {
  const wanted = new Set(inodes.map((i) => `socket:[${i}]`));
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      if (!wanted.has(await readlink(`/proc/${entry}/fd/${fd}`).catch(() => ''))) continue;
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
      return {
        pid: Number(entry),
        exe: await readlink(`/proc/${entry}/exe`).catch(() => undefined),
        command: cmdline.replace(/\0/g, ' ').trim().slice(0, 120),
      };
    }
  }
  return undefined;
}

/** The lines that stop the real node here (none: go ahead). `dataDir` is where its image stores live. */
export async function nodePreflight(opts: {
  readonly dataDir: string;
  readonly binDir: string;
  readonly keptStores: readonly string[];
}): Promise<string[]> {
  const lines: string[] = [];
  const tcp = (await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((f) => readFile(f, 'utf8').catch(() => ''))))
    .map((t) => t.trimEnd())
    .join('\n');
  for (const p of NODE_FIXED_PORTS) {
    const inodes = listenersBlocking(tcp, p.address, p.port);
    if (inodes.length > 0) lines.push(portTakenLine(p, await holderOf(inodes), opts.binDir));
  }
  const fs = await statfs(opts.dataDir).catch(() => undefined);
  const disk = fs && diskSpaceLine(opts.dataDir, fs.bavail * fs.bsize, opts.keptStores);
  if (disk !== undefined) lines.push(disk);
  return lines;
}
