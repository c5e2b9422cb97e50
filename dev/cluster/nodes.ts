/**
 * The simulated Nodes kwok manages, and kwok's stage configuration. No container ever runs: kwok writes the
 * Node and Pod status a kubelet would (Ready, a pod IP from the Node's spec.podCIDR), so the real scheduler,
 * Deployment, ReplicaSet and EndpointSlice controllers do their work on them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { capture } from '../host/exec.js';
import { ControlPlaneError } from '../host/errors.js';
import { KWOK } from './binaries.js';
import { nodeAddress, podCidr } from './network.js';

/** kwok manages exactly the Nodes with this label (`--manage-nodes-with-label-selector`). */
export const SIMULATED_NODE_LABEL = 'kwok.x-k8s.io/node';

export interface NodeShape {
  readonly count: number;
  readonly cpu: string;
  readonly memory: string;
  readonly pods: number;
}

/** Six: the examples' containerSpec model (2 × n1-standard-2) is applied by several test suites into namespaces that are never deleted. */
export const DEFAULT_NODES: NodeShape = { count: 6, cpu: '8', memory: '32Gi', pods: 110 };

function simulatedNodeName(index: number): string {
  return `kwok-node-${index}`;
}

/** The Node objects, status included: kwok keeps capacity and addresses it finds, as a kubelet registers them. */
export function simulatedNodes(shape: NodeShape = DEFAULT_NODES): Record<string, unknown>[] {
  return Array.from({ length: shape.count }, (_, i) => {
    const name = simulatedNodeName(i);
    // ephemeral-storage: a kubelet reports its root filesystem; without it a pod that requests some (the chart's) never schedules.
    const resources = { cpu: shape.cpu, memory: shape.memory, 'ephemeral-storage': '100Gi', pods: String(shape.pods) };
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          [SIMULATED_NODE_LABEL]: 'fake',
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          type: 'kwok',
        },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0', [SIMULATED_NODE_LABEL]: 'fake' },
      },
      spec: { podCIDR: podCidr(i), podCIDRs: [podCidr(i)] },
      status: {
        capacity: resources,
        allocatable: resources,
        addresses: [
          { type: 'InternalIP', address: nodeAddress(i) },
          { type: 'Hostname', address: name },
        ],
      },
    };
  });
}

/** kwok's own "fast" stages (no delays) and its lease heartbeat, read from the kwok module the build used. */
const STAGE_FILES = [
  'kustomize/stage/node/fast/node-initialize.yaml',
  'kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
  'kustomize/stage/pod/fast/pod-ready.yaml',
  'kustomize/stage/pod/fast/pod-complete.yaml',
  'kustomize/stage/pod/fast/pod-delete.yaml',
];

/** The text of kwok's --config: its stage files, from the module cache (the build has downloaded it). */
export async function kwokStages(): Promise<string> {
  const r = await capture('go', ['mod', 'download', '-json', `sigs.k8s.io/kwok@${KWOK.version}`], {
    ...process.env,
    GOTOOLCHAIN: 'local',
  });
  const dir = r.code === 0 ? (JSON.parse(r.stdout) as { Dir?: string }).Dir : undefined;
  if (dir === undefined)
    throw new ControlPlaneError(
      `cannot find kwok's module source for its stage files: go mod download failed: ${r.stderr.trim()}`,
    );
  const docs = await Promise.all(STAGE_FILES.map((f) => readFile(join(dir, f), 'utf8')));
  return docs.map((d) => d.trim()).join('\n---\n') + '\n';
}
