/**
 * The real node's network (node.ts): containerd, its CNI bridge and every pod live in a network namespace of
 * their own, joined to this one by a veth pair; this namespace routes the node's pod range through it. All
 * addresses are in SIMULATED_RANGE (network.ts), apart from what the kwok Nodes, the Services and the model
 * hosts use there:
 *
 *   198.18.<n>.0/24     kwok Node n's pods           198.19.0.0/20     Service cluster IPs
 *   198.19.16.<n+1>     kwok Node n's address        198.19.255.0/24   model hosts' /30 links
 *   198.19.128.0/24     the real node's pods         198.19.254.0/30   the real node's link
 *
 * Both real-node prefixes are more specific than the unreachable route for the whole range, so they win, and
 * nothing here is routed off the machine. One real node per machine: the kubelet has fixed paths and ports
 * (node.ts), so the names and addresses are fixed too.
 */
import { capture } from '../../host/exec.js';
import { ControlPlaneError } from '../../host/errors.js';

export const NODE_NETNS = 'eo-real-node';
/** The veth end in this namespace (deleting it deletes the pair and the route through it). */
export const NODE_HOST_LINK = 'eorn-host';
const NODE_PEER_LINK = 'eorn-node';
/** This namespace's end of the link: the kubelet's node IP, and where the local registry listens. */
export const NODE_HOST_ADDRESS = '198.19.254.1';
/** The node namespace's end: containerd's streaming server listens here. */
export const NODE_NS_ADDRESS = '198.19.254.2';
const NODE_LINK_PREFIX = 30;
export const NODE_POD_CIDR = '198.19.128.0/24';
/** The CNI bridge's address in the node namespace: the pods' gateway. */
export const NODE_POD_GATEWAY = '198.19.128.1';

async function ip(args: readonly string[]): Promise<void> {
  const r = await capture('ip', args);
  if (r.code !== 0) throw new ControlPlaneError(`ip ${args.join(' ')} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
}

/** True when the node namespace exists, i.e. a real node runs or a dead one was not cleaned up. */
export async function nodeNetworkExists(): Promise<boolean> {
  const r = await capture('ip', ['netns', 'list']);
  return r.stdout.split('\n').some((line) => line.split(' ')[0] === NODE_NETNS);
}

/**
 * Creates the namespace, the veth pair and the host route to the pod range. The namespace forwards between
 * the bridge and the link (its own ip_forward, set by the CNI bridge plugin's isGateway; this namespace's
 * sysctls are not touched: the host is an end point of this traffic, never a router).
 */
export async function createNodeNetwork(): Promise<void> {
  try {
    await ip(['netns', 'add', NODE_NETNS]);
    await ip(['link', 'add', NODE_HOST_LINK, 'type', 'veth', 'peer', 'name', NODE_PEER_LINK, 'netns', NODE_NETNS]);
    await ip(['addr', 'add', `${NODE_HOST_ADDRESS}/${NODE_LINK_PREFIX}`, 'dev', NODE_HOST_LINK]);
    await ip(['link', 'set', NODE_HOST_LINK, 'up']);
    await ip(['-n', NODE_NETNS, 'link', 'set', 'lo', 'up']);
    await ip(['-n', NODE_NETNS, 'addr', 'add', `${NODE_NS_ADDRESS}/${NODE_LINK_PREFIX}`, 'dev', NODE_PEER_LINK]);
    await ip(['-n', NODE_NETNS, 'link', 'set', NODE_PEER_LINK, 'up']);
    await ip(['-n', NODE_NETNS, 'route', 'add', 'default', 'via', NODE_HOST_ADDRESS]);
    await ip(['route', 'add', NODE_POD_CIDR, 'via', NODE_NS_ADDRESS, 'dev', NODE_HOST_LINK]);
  } catch (err) {
    await removeNodeNetwork();
    throw err;
  }
}

/** Deletes the link (and with it the route) and the namespace; what is already gone is fine. */
export async function removeNodeNetwork(): Promise<void> {
  await capture('ip', ['link', 'del', NODE_HOST_LINK]);
  await capture('ip', ['netns', 'del', NODE_NETNS]);
}

/**
 * The command line that runs `cmd args` in the node namespace's network and this namespace's mounts: not
 * `ip netns exec`, which also enters a mount namespace of its own with a fresh /sys, where runc would find no
 * cgroup hierarchies and the kubelet's volume mounts would not be seen by containerd.
 */
export function inNodeNetwork(cmd: string, args: readonly string[]): [string, string[]] {
  return ['nsenter', [`--net=/var/run/netns/${NODE_NETNS}`, '--', cmd, ...args]];
}
