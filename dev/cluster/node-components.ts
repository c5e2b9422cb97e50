/**
 * The components that make the simulated Nodes work once the apiserver is ready: kube-controller-manager,
 * kube-scheduler and kwok, each with its own identity, then the Nodes themselves.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcessGroup } from '../host/child-process-group.js';
import { ControlPlaneError } from '../host/errors.js';
import type { ensureClusterBinaries } from './binaries.js';
import type { writeCredentials } from './credentials.js';
import { controllerManagerArgs, kwokArgs, schedulerArgs } from './flags.js';
import { renderKubeconfig } from './kubeconfig.js';
import { kwokStages, SIMULATED_NODE_LABEL, simulatedNodes, type NodeShape } from './nodes.js';
import { distinctFreePorts } from './ports.js';
import type { RunningProcesses } from './processes.js';
import { apiserverRequest, componentHealthy, logTail, nodesReady, waitUntilReady } from './readiness.js';

/** The identities the components act as: the names Kubernetes' bootstrap RBAC binds its roles to. */
export const COMPONENT_USERS = {
  controllerManager: 'system:kube-controller-manager',
  scheduler: 'system:kube-scheduler',
} as const;

export interface NodeComponentsInput {
  readonly run: RunningProcesses;
  readonly bins: Awaited<ReturnType<typeof ensureClusterBinaries>>;
  readonly dataDir: string;
  readonly logDir: string;
  readonly server: string;
  readonly caPem: string;
  readonly adminToken: string;
  readonly kubeconfigPath: string;
  readonly componentTokens: { readonly controllerManager: string; readonly scheduler: string };
  readonly creds: Awaited<ReturnType<typeof writeCredentials>>;
  readonly shape: NodeShape;
  readonly unthrottledControllerManager: boolean;
  readonly log: (line: string) => void;
}

/** kube-controller-manager, kube-scheduler and kwok, then the simulated Nodes; resolves once all are healthy. */
export async function startNodeComponents(c: NodeComponentsInput): Promise<string[]> {
  const [kcmPort = 0, schedulerPort = 0, kwokPort = 0] = await distinctFreePorts(3);
  const kubeconfig = async (name: string, user: string, token: string): Promise<string> => {
    const path = join(c.dataDir, `${name}.kubeconfig`);
    await writeFile(path, renderKubeconfig({ server: c.server, token, caPem: c.caPem, user }), { mode: 0o600 });
    return path;
  };
  const stagesFile = join(c.dataDir, 'kwok-stages.yaml');
  await writeFile(stagesFile, await kwokStages());

  const started = Date.now();
  const kcm = await c.run.start(
    'kube-controller-manager',
    c.bins.kubeControllerManager,
    controllerManagerArgs({
      kubeconfig: await kubeconfig(
        'kube-controller-manager',
        COMPONENT_USERS.controllerManager,
        c.componentTokens.controllerManager,
      ),
      securePort: kcmPort,
      caFile: c.creds.caFile,
      serviceAccountSigningKeyFile: c.creds.serviceAccountSigningKeyFile,
      unthrottled: c.unthrottledControllerManager,
    }),
    join(c.logDir, 'kube-controller-manager.log'),
  );
  const scheduler = await c.run.start(
    'kube-scheduler',
    c.bins.kubeScheduler,
    schedulerArgs({
      kubeconfig: await kubeconfig('kube-scheduler', COMPONENT_USERS.scheduler, c.componentTokens.scheduler),
      securePort: schedulerPort,
    }),
    join(c.logDir, 'kube-scheduler.log'),
  );
  const kwok = await c.run.start(
    'kwok',
    c.bins.kwok,
    kwokArgs({ kubeconfig: c.kubeconfigPath, stagesFile, nodeLabel: SIMULATED_NODE_LABEL, serverPort: kwokPort }),
    join(c.logDir, 'kwok.log'),
  );

  const nodes = simulatedNodes(c.shape);
  for (const node of nodes) {
    const r = await apiserverRequest(c.server, 'POST', '/api/v1/nodes', {
      caPem: c.caPem,
      token: c.adminToken,
      body: node,
    });
    if (r.status !== 201)
      throw new ControlPlaneError(
        `creating the simulated Node ${JSON.stringify((node.metadata as { name: string }).name)} failed: ${r.status} ${r.body.slice(0, 300)}`,
      );
  }
  const names = nodes.map((n) => (n.metadata as { name: string }).name);
  const checks: [ChildProcessGroup, () => Promise<true | string>][] = [
    [kcm, () => componentHealthy(kcmPort)],
    [scheduler, () => componentHealthy(schedulerPort)],
    [kwok, () => nodesReady(c.server, c.caPem, c.adminToken, names)],
  ];
  for (const [proc, probe] of checks) {
    const ready = await waitUntilReady(proc, probe, 60_000);
    if (!ready.ready)
      throw new ControlPlaneError(
        `${proc.name} did not become ready: ${ready.why}${await logTail(proc.logFile)}`,
        proc.logFile,
      );
  }
  c.log(
    `kube-controller-manager, kube-scheduler and ${names.length} kwok Nodes ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return names;
}
