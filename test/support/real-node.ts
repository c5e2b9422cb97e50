/**
 * A control plane of a test file's own with the machine's one real node (dev/cluster/real-node/node.ts). Integration
 * files run one at a time, but a developer's `npm start -- --real-node` or a second run may hold the node:
 * the file waits its turn for a while rather than failing at once.
 */
import type { MachineCatalogue } from '../../src/api/prediction/v1/machine-catalogue.js';
import {
  REAL_NODE_CATALOGUE as DEV_REAL_NODE_CATALOGUE,
  REAL_NODE_MACHINE_TYPE,
} from '../../dev/environment/real-node-model.js';
import { startControlPlane, type ControlPlane } from '../../dev/cluster/index.js';

export { REAL_NODE_MACHINE_TYPE };

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
 * `npm start -- --real-node`'s machine catalogue (ConfigMap endpoint-operator-machine-types), with its real-node
 * machine type also the default: a DeployedModel's replicas land on the real node unless it names another type.
 */
export const REAL_NODE_CATALOGUE: MachineCatalogue = {
  ...DEV_REAL_NODE_CATALOGUE,
  defaultMachineType: REAL_NODE_MACHINE_TYPE,
};
