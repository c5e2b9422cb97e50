/**
 * Which nodes `npm start` runs: the real node (kubelet + containerd, dev/cluster/real-node) wherever the machine
 * allows it, kwok's simulated nodes where it does not (with one line saying why and how to get the real one), or
 * when `--simulated-nodes` asks. `--real-node` insists: it refuses rather than falls back. Pure: the facts are
 * read by the caller (main.ts).
 */
import { UsageError } from '../../src/cli/flags.js';
import { REAL_NODE_HOW } from '../cluster/real-node/node-host-support.js';

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
