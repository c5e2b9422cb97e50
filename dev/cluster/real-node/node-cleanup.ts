/**
 * Removing everything the real node made, in one bash script written when the node starts: the orderly stop,
 * the watchdog (after a SIGKILL of its owner) and the next start's stale-run clean-up all run that same
 * script, so they cannot disagree. Order matters: processes first (a live shim would remount), then mounts
 * deepest first (an `rm -rf` through a live mount would delete what it shows), then cgroups (a cgroup goes
 * only when empty), then the network, then the files.
 */
import { NODE_HOST_LINK, NODE_NETNS } from './node-network.js';

export interface NodeCleanupInput {
  /** The node's own directory, removed last. */
  readonly root: string;
  /** containerd's root: unmounted below like the rest, but kept (node.ts realNodeImageStoreDir). */
  readonly imageStore: string;
  /** The runc shim containerd started: its processes are found by their executable. */
  readonly shim: string;
  /** The node's daemons (kubelet, containerd, registry, kube-proxy), ended first, found by their executables. */
  readonly daemons: readonly string[];
  /** Fixed paths (node-config.ts FIXED_HOST_PATHS) that did not exist before the node started. */
  readonly createdHostPaths: readonly string[];
}

/** The cgroups the kubelet (cgroupfs driver) and containerd's k8s.io namespace create, in every hierarchy. */
const CGROUP_GLOBS = ['/sys/fs/cgroup/*/kubepods', '/sys/fs/cgroup/*/k8s.io', '/sys/fs/cgroup/kubepods'];

const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function nodeCleanupScript(c: NodeCleanupInput): string {
  const mountRoots = [c.root, c.imageStore, ...c.createdHostPaths];
  return `#!/bin/bash
# Removes what the local cluster's real node made (dev/cluster/real-node/node-cleanup.ts). Idempotent.
root=${sh(c.root)}
shim=${sh(c.shim)}
daemons=(${c.daemons.map(sh).join(' ')})
cgroups() { for g in ${CGROUP_GLOBS.join(' ')}; do [ -d "$g" ] && echo "$g"; done; }

# One find over /proc, not a readlink per process and executable: that took 1.4 s per call among 100 processes.
pids_of() {
  find /proc/[0-9]*/exe -maxdepth 0 -printf '%l\\t%h\\n' 2>/dev/null |
    awk -F '\\t' 'NR == FNR { want[$0]; next } ($1 in want) { sub("^/proc/", "", $2); print $2 }' <(printf '%s\\n' "$@") -
}

# Daemons: SIGTERM, then SIGKILL after 5 s (nothing may restart a container while the rest goes).
for p in $(pids_of "\${daemons[@]}"); do kill -TERM "$p" 2>/dev/null; done
for attempt in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(pids_of "\${daemons[@]}")" ] && break; sleep 0.5; done
for p in $(pids_of "\${daemons[@]}"); do kill -KILL "$p" 2>/dev/null; done

# Containers: every process in the node's cgroups, and the shims.
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  left=0
  for g in $(cgroups); do
    for p in $(find "$g" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -KILL "$p" 2>/dev/null; left=1; done
  done
  for p in $(pids_of "$shim"); do kill -KILL "$p" 2>/dev/null; left=1; done
  [ "$left" = 0 ] && break
  sleep 0.5
done

# Mounts (overlay rootfs, pod network namespaces, volumes, the kubelet's shared root), deepest first.
for r in ${mountRoots.map(sh).join(' ')}; do
  awk -v r="$r" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo
done | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done

# Cgroups, deepest first (rmdir removes only empty ones).
for g in $(cgroups); do find "$g" -depth -type d -exec rmdir {} \\; 2>/dev/null; done

# Network: the link (its route goes with it) and the namespace (and with it the bridge and the pods' veths).
ip link del ${NODE_HOST_LINK} 2>/dev/null
ip netns del ${NODE_NETNS} 2>/dev/null

# Files: never across a mount left behind. The image store stays (node.ts realNodeImageStoreDir).
for d in ${[c.root, ...c.createdHostPaths].map(sh).join(' ')}; do rm -rf --one-file-system "$d"; done
exit 0
`;
}
