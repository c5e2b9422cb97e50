/**
 * The local cluster's addresses, kept on this machine.
 *
 * Simulated nodes, their pods and the Services' cluster IPs take addresses in 198.18.0.0/15 (RFC 2544's
 * benchmarking range, which nothing on the internet uses), and an `unreachable` route for that range is
 * installed while a cluster runs: a dial to a simulated pod fails at once with EHOSTUNREACH and no packet
 * leaves the machine. Only the model host below answers inside it.
 *
 * Current apiservers refuse loopback addresses in EndpointSlices (ValidateEndpointIP), so model servers the
 * gateway calls through a Service cannot listen on 127.0.0.1. Each control plane therefore gets a model host:
 * a network namespace of its own, joined to this one by a veth pair with a /30 out of 198.19.255.0/24 (more
 * specific than the unreachable route, so it wins). Servers listen at its address, either as processes run in
 * it (`inModelHost`) or as sockets opened in it for this process (model-host.ts).
 */
import { capture } from '../host/exec.js';
import { ControlPlaneError } from '../host/errors.js';
import { isRoot } from '../host/apt.js';

/** Nothing answers here but the model hosts. */
export const SIMULATED_RANGE = '198.18.0.0/15';
/** Dual-stack, as the registry's DNS projection is (an IPv6 ULA range: nothing dials a cluster IP). */
export const SERVICE_CLUSTER_IP_RANGE = '198.19.0.0/20,fdee:198:19::/112';
const MODEL_HOST_PREFIX = '198.19.255.';
const MODEL_HOST_SLOTS = 64;

/** Node `index`'s pod range: kwok gives its pods addresses from the Node's spec.podCIDR. */
export function podCidr(index: number): string {
  return `198.18.${index}.0/24`;
}

export function nodeAddress(index: number): string {
  return `198.19.16.${index + 1}`;
}

/** Where a model server listens for the gateway: a network namespace and its address (plain data, sent to test workers). */
export interface ModelHost {
  readonly netns: string;
  readonly address: string;
  /** The veth end in this namespace; deleting it deletes the pair. */
  readonly hostLink: string;
}

async function ip(args: readonly string[]): Promise<string> {
  const r = await capture('ip', args);
  if (r.code !== 0) throw new ControlPlaneError(`ip ${args.join(' ')} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.stdout;
}

function requireRoot(): void {
  if (!isRoot()) {
    throw new ControlPlaneError(
      'the local cluster needs root: it creates a network namespace for the model servers and a route that keeps simulated pod addresses on this machine (or use an existing cluster with --kubeconfig)',
    );
  }
}

/** Installs the unreachable route for SIMULATED_RANGE (idempotent). */
export async function installSimulatedRoute(): Promise<void> {
  requireRoot();
  await ip(['route', 'replace', 'unreachable', SIMULATED_RANGE]);
}

/** Removes it; called by the last control plane to stop. A missing route is fine. */
export async function removeSimulatedRoute(): Promise<void> {
  await capture('ip', ['route', 'del', 'unreachable', SIMULATED_RANGE]);
}

/** The /30 slots in use, from the addresses on this namespace's links. */
function usedSlots(addrOutput: string): Set<number> {
  const used = new Set<number>();
  for (const m of addrOutput.matchAll(/inet 198\.19\.255\.(\d+)\//g)) used.add(Math.floor(Number(m[1]) / 4));
  return used;
}

/** The free slot with the lowest number, or undefined when all are taken. Pure: unit-tested. */
export function freeSlot(addrOutput: string, slots = MODEL_HOST_SLOTS): number | undefined {
  const used = usedSlots(addrOutput);
  for (let s = 0; s < slots; s++) if (!used.has(s)) return s;
  return undefined;
}

/**
 * Creates the model host `eo-<id>` (id: a few hex digits unique to this run). Callers hold the network lock,
 * so two starts never pick the same slot.
 */
export async function createModelHost(id: string): Promise<ModelHost> {
  requireRoot();
  const slot = freeSlot(await ip(['-4', '-o', 'addr', 'show']));
  if (slot === undefined)
    throw new ControlPlaneError(
      `all ${MODEL_HOST_SLOTS} model host address slots in ${MODEL_HOST_PREFIX}0/24 are taken: stop other local clusters`,
    );
  const host: ModelHost = { netns: `eo-${id}`, address: `${MODEL_HOST_PREFIX}${slot * 4 + 2}`, hostLink: `eoh${id}` };
  try {
    await ip(['netns', 'add', host.netns]);
    await ip(['link', 'add', host.hostLink, 'type', 'veth', 'peer', 'name', `eon${id}`, 'netns', host.netns]);
    await ip(['addr', 'add', `${MODEL_HOST_PREFIX}${slot * 4 + 1}/30`, 'dev', host.hostLink]);
    await ip(['link', 'set', host.hostLink, 'up']);
    await ip(['-n', host.netns, 'addr', 'add', `${host.address}/30`, 'dev', `eon${id}`]);
    await ip(['-n', host.netns, 'link', 'set', `eon${id}`, 'up']);
    await ip(['-n', host.netns, 'link', 'set', 'lo', 'up']);
  } catch (err) {
    await removeModelHost(host);
    throw err;
  }
  return host;
}

/** Deletes the veth pair and the namespace; what is already gone is fine. */
export async function removeModelHost(host: Pick<ModelHost, 'netns' | 'hostLink'>): Promise<void> {
  await capture('ip', ['link', 'del', host.hostLink]);
  await capture('ip', ['netns', 'del', host.netns]);
}

/** The command line that runs `cmd args` inside the model host (`ip netns exec` execs it: the pid is the command's). */
export function inModelHost(host: Pick<ModelHost, 'netns'>, cmd: string, args: readonly string[]): [string, string[]] {
  return ['ip', ['netns', 'exec', host.netns, cmd, ...args]];
}
