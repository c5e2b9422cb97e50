/**
 * Which nodes `npm start` runs: the real node (kubelet + containerd, dev/cluster/real-node) wherever the machine
 * allows it, kwok's simulated nodes where it does not (with one line saying why and how to get the real one), or
 * when `--simulated-nodes` asks. `--real-node` insists: it refuses rather than falls back. chooseNodes decides
 * (pure, unit-tested); nodesForThisMachine reads the facts and says the lines.
 */
import { UsageError, bool, num, type FlagValues } from '../../src/cli/flags.js';
import { realNodeOwner, realNodePreflight } from '../cluster/real-node/node.js';
import { readHostFacts, realNodeBlocker, REAL_NODE_HOW } from '../cluster/real-node/node-host-support.js';
import { runsDir } from '../host/paths.js';
import { cleanupStaleRuns, staleRunsLine } from '../host/run-registry.js';

export interface NodeChoiceInput {
  readonly simulatedNodes: boolean;
  readonly realNode: boolean;
  /** --kubeconfig: a cluster that is not ours to add a node to. */
  readonly existingCluster: boolean;
  /** Without root neither kind of local cluster starts: the cluster's own check says so (network.ts). */
  readonly root: boolean;
  /** Why this machine cannot run the real node (node-host-support.ts realNodeBlocker), if it cannot. */
  readonly blocker: string | undefined;
  /** The live pid holding the machine's one real node, if another cluster has it. */
  readonly owner: number | undefined;
  /** --real-node-wait: how long to wait for that owner to stop (0: do not wait). */
  readonly waitSeconds: number;
}

export type NodeChoice =
  | { readonly kind: 'real'; readonly waitMs: number }
  | { readonly kind: 'simulated'; readonly line: string | undefined }
  | { readonly kind: 'refused'; readonly line: string };

const FALLBACK = 'so the Nodes are simulated by kwok (a containerSpec model is scheduled but runs no container)';

export function chooseNodes(i: NodeChoiceInput): NodeChoice {
  if (i.simulatedNodes && i.realNode) throw new UsageError('--simulated-nodes and --real-node exclude each other');
  if (i.existingCluster || i.simulatedNodes || !i.root) return { kind: 'simulated', line: undefined };
  if (i.blocker !== undefined)
    return i.realNode
      ? {
          kind: 'refused',
          line: `--real-node: this machine cannot run the real node: ${i.blocker}; it needs ${REAL_NODE_HOW} (without --real-node the Nodes are simulated)`,
        }
      : { kind: 'simulated', line: `no real node: ${i.blocker}, ${FALLBACK}; for a real node run as ${REAL_NODE_HOW}` };
  // --real-node alone waits for nobody: startControlPlane's refusal names the owner.
  if (i.owner !== undefined && i.waitSeconds === 0 && !i.realNode)
    return {
      kind: 'simulated',
      line: `no real node: pid ${i.owner}'s local cluster has this machine's one real node, ${FALLBACK}; stop that cluster, or wait for it with --real-node-wait SECONDS`,
    };
  return { kind: 'real', waitMs: i.waitSeconds * 1000 };
}

/**
 * chooseNodes on this machine's facts, its line said; for the real node, a killed run's leftovers ended and the
 * preflight passed. The exit code when `dev` stops here (a refusal, or a preflight line).
 */
export async function nodesForThisMachine(
  values: FlagValues,
  existingCluster: boolean,
  say: (line: string) => void,
): Promise<Exclude<NodeChoice, { kind: 'refused' }> | number> {
  const owner = await realNodeOwner();
  const nodes = chooseNodes({
    simulatedNodes: bool(values, 'simulated-nodes'),
    realNode: bool(values, 'real-node'),
    existingCluster,
    root: process.geteuid?.() === 0,
    blocker: realNodeBlocker(await readHostFacts()),
    owner,
    waitSeconds: num(values, 'real-node-wait'),
  });
  if (nodes.kind === 'refused') {
    say(nodes.line);
    return 2;
  }
  if (nodes.kind === 'simulated' && nodes.line !== undefined) say(nodes.line);
  // Before the model's image build starts beside the cluster: a machine where the node would fail stops here. Not
  // while another cluster has the node: its daemons hold the ports, and startControlPlane checks again once it is ours.
  if (nodes.kind === 'real' && owner === undefined) {
    const stale = staleRunsLine(await cleanupStaleRuns(runsDir()));
    if (stale !== undefined) say(stale);
    const problems = await realNodePreflight();
    for (const p of problems) say(p);
    if (problems.length > 0) return 2;
  }
  return nodes;
}
