/**
 * A control plane of a test file's own with the machine's one real node (src/devcluster/node.ts). Integration
 * files run one at a time, but a developer's `npm start -- --real-node` or a second run may hold the node:
 * the file waits its turn for a while rather than failing at once.
 */
import { startControlPlane, type ControlPlane } from '../../src/devcluster/index.js';
import { ON_REAL_NODE } from '../../src/devcluster/node-config.js';
import { DEFAULT_MACHINE_CATALOGUE, type MachineCatalogue } from '../../src/api/prediction/v1/machine-catalogue.js';

const WAIT_FOR_NODE_MS = 20 * 60_000;

export function startRealNodeCluster(name: string): Promise<ControlPlane> {
  const log = (line: string): void => console.error(`[${name}: control plane] ${line}`);
  return startControlPlane({
    log,
    realNode: true,
    realNodeWaitMs: WAIT_FOR_NODE_MS,
    nodes: { count: 1, cpu: '8', memory: '32Gi', pods: 110 },
  });
}

/**
 * The machine catalogue a file installs so that DeployedModels' replicas land on the real node: its machine
 * type is small enough for a 2-core machine and tolerates the node's taint.
 */
export const REAL_NODE_MACHINE_TYPE = 'e2-small';
export const REAL_NODE_CATALOGUE: MachineCatalogue = {
  ...DEFAULT_MACHINE_CATALOGUE,
  defaultMachineType: REAL_NODE_MACHINE_TYPE,
  machineTypes: {
    ...DEFAULT_MACHINE_CATALOGUE.machineTypes,
    [REAL_NODE_MACHINE_TYPE]: {
      cpu: '100m',
      // The memory request is also the limit (serving-plan.ts): MLServer with scikit-learn needs about 400 MB.
      memory: '1Gi',
      nodeSelector: { ...ON_REAL_NODE.nodeSelector },
      tolerations: ON_REAL_NODE.tolerations.map((t) => ({ ...t })),
    },
  },
};
