/**
 * A control plane of a test file's own with the machine's one real node (dev/cluster/real-node/node.ts). Integration
 * files run one at a time, but a developer's `npm start` (its real node) or a second run may hold the node:
 * the file waits its turn for a while rather than failing at once.
 */
import type { MachineCatalogue } from '../../src/api/prediction/v1/machine-catalogue.js';
import {
  REAL_NODE_CATALOGUE as DEV_REAL_NODE_CATALOGUE,
  REAL_NODE_MACHINE_TYPE,
} from '../../dev/environment/real-node-model.js';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot, startControlPlane, type ControlPlane } from '../../dev/cluster/index.js';
import { realNodeDir, realNodeImageStoreDir, realNodeOwner } from '../../dev/cluster/real-node/node.js';
import { NODE_NETNS } from '../../dev/cluster/real-node/node-network.js';

export { REAL_NODE_MACHINE_TYPE };

const WAIT_FOR_NODE_MS = 20 * 60_000;

/** The kwok Nodes beside the real node in a test's cluster: one. */
export const ONE_KWOK_NODE = { count: 1, cpu: '8', memory: '32Gi', pods: 110 } as const;

export function startRealNodeCluster(name: string): Promise<ControlPlane> {
  const log = (line: string): void => console.error(`[${name}: control plane] ${line}`);
  return startControlPlane({
    log,
    realNode: true,
    realNodeWaitMs: WAIT_FOR_NODE_MS,
    nodes: ONE_KWOK_NODE,
  });
}

/**
 * `npm start`'s machine catalogue on the real node (ConfigMap endpoint-operator-machine-types), with its real-node
 * machine type also the default: a DeployedModel's replicas land on the real node unless it names another type.
 */
export const REAL_NODE_CATALOGUE: MachineCatalogue = {
  ...DEV_REAL_NODE_CATALOGUE,
  defaultMachineType: REAL_NODE_MACHINE_TYPE,
};

/** The real node's own programs (kube-apiserver, etcd and kwok run for every cluster). */
const NODE_PROGRAMS = new Set(['kubelet', 'kube-proxy', 'containerd', 'containerd-shim-runc-v2', 'registry']);

/**
 * What of the real node is still there once its cluster stopped: its processes, netns, mounts under its
 * directories and kubepods cgroups. Unknown (empty) while another cluster has already taken the node over: those
 * would be its own.
 */
export async function realNodeLeftovers(): Promise<string[]> {
  if ((await realNodeOwner()) !== undefined) return [];
  const left: string[] = [];
  const bin = join(cacheRoot(), 'bin');
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    const exe = /^\d+$/.test(pid) ? await readlink(`/proc/${pid}/exe`).catch(() => '') : '';
    if (exe.startsWith(`${bin}/`) && NODE_PROGRAMS.has(basename(exe))) left.push(`process ${pid} ${exe}`);
  }
  const netns = await promisify(execFile)('ip', ['netns', 'list']).catch(() => ({ stdout: '' }));
  if (netns.stdout.includes(NODE_NETNS)) left.push(`network namespace ${NODE_NETNS}`);
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  for (const line of mounts.split('\n'))
    if (line.includes(`${realNodeDir()}/`) || line.includes(realNodeImageStoreDir())) left.push(`mount ${line}`);
  for (const dir of await readdir('/sys/fs/cgroup').catch(() => [] as string[]))
    for (const g of ['kubepods', 'k8s.io'])
      if (existsSync(join('/sys/fs/cgroup', dir, g))) left.push(`cgroup /sys/fs/cgroup/${dir}/${g}`);
  return left;
}
