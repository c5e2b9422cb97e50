/**
 * Whether this machine can run the real node (node.ts) at all: root with the capabilities to mount and make
 * namespaces, the cgroup controllers the kubelet and runc need, and overlayfs for containerd's snapshots. Read
 * from /proc before anything is built, so `npm start` can fall back to kwok's simulated nodes with one line
 * saying why, instead of failing after minutes of builds. The decision is pure (unit-tested); readHostFacts
 * gathers its inputs.
 */
import { readFile } from 'node:fs/promises';

export interface NodeHostFacts {
  /** The effective uid (undefined where there are no uids). */
  readonly uid: number | undefined;
  /** `CapEff:` of /proc/self/status, hex; undefined when it could not be read. */
  readonly capEff: string | undefined;
  /** /proc/self/mounts. */
  readonly mounts: string;
  /** /proc/filesystems. */
  readonly filesystems: string;
}

/** Capabilities (linux/capability.h) the node's mounts, namespaces and links need. */
const NEEDED_CAPABILITIES = { CAP_NET_ADMIN: 12, CAP_SYS_ADMIN: 21 } as const;

/** The controllers the kubelet (cgroupfs driver) refuses to start without. */
export const NEEDED_CGROUP_CONTROLLERS = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids'] as const;

/** How a user gets the real node where it is refused: the sentence every fallback line ends with. */
export const REAL_NODE_HOW =
  'root with writable cgroups (v1 or v2) and overlayfs, e.g. a VM or `docker run --privileged` (docs/local-cluster.md#the-real-node-realnode-true)';

function hasCapability(capEff: string, bit: number): boolean {
  const value = BigInt(`0x${capEff.trim() || '0'}`);
  return ((value >> BigInt(bit)) & 1n) === 1n;
}

/** The writable cgroup mounts of /proc/self/mounts: v1 controllers by name, and whether a v2 hierarchy is mounted. */
export function writableCgroups(mounts: string): { readonly v1: Set<string>; readonly v2: boolean } {
  const v1 = new Set<string>();
  let v2 = false;
  for (const line of mounts.split('\n')) {
    const [, , type, options = ''] = line.split(' ');
    const opts = options.split(',');
    if (!opts.includes('rw')) continue;
    if (type === 'cgroup2') v2 = true;
    if (type === 'cgroup') for (const o of opts) v1.add(o);
  }
  return { v1, v2 };
}

/**
 * Why this machine cannot run the real node, as a clause ("no writable memory cgroup"), or undefined when it
 * can. The first reason found: the one a user fixes first.
 */
export function realNodeBlocker(f: NodeHostFacts): string | undefined {
  if (f.uid !== undefined && f.uid !== 0) return `not root (uid ${f.uid})`;
  if (f.capEff !== undefined) {
    const missing = Object.entries(NEEDED_CAPABILITIES)
      .filter(([, bit]) => !hasCapability(f.capEff ?? '0', bit))
      .map(([name]) => name);
    if (missing.length > 0) return `root here lacks ${missing.join(' and ')} (an unprivileged container?)`;
  }
  const cgroups = writableCgroups(f.mounts);
  // A v2 hierarchy carries every controller in one mount; v1 needs each mounted read-write.
  if (!cgroups.v2) {
    const missing = NEEDED_CGROUP_CONTROLLERS.filter((c) => !cgroups.v1.has(c));
    if (missing.length === NEEDED_CGROUP_CONTROLLERS.length) return 'no writable cgroup hierarchy is mounted';
    if (missing.length > 0) return `no writable ${missing.join(', ')} cgroup${missing.length > 1 ? 's' : ''}`;
  }
  if (!/\boverlay$/m.test(f.filesystems)) return 'the kernel has no overlayfs (containerd unpacks images with it)';
  return undefined;
}

/** This process's facts, from /proc. */
export async function readHostFacts(): Promise<NodeHostFacts> {
  const text = (path: string): Promise<string> => readFile(path, 'utf8').catch(() => '');
  const status = await text('/proc/self/status');
  return {
    uid: process.geteuid?.(),
    capEff: /^CapEff:\s*([0-9a-f]+)$/im.exec(status)?.[1],
    mounts: await text('/proc/self/mounts'),
    filesystems: await text('/proc/filesystems'),
  };
}
