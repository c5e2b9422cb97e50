import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClusterBinaries, selectedRelease, type KubernetesRelease } from './binaries.js';
import type { ChildProcessGroup } from './child-process-group.js';
import { randomToken, renderTokenFile, writeCredentials } from './credentials.js';
import type { TokenUser } from './credentials.js';
import { ControlPlaneError } from './errors.js';
import { acquireFileLock, type FileLock } from './file-lock.js';
import {
  claimRealNode,
  runCleanupScript,
  realNodeTokenUsers,
  startRealNode,
  type RealNode,
  type StartedRealNode,
} from './node.js';
import { apiserverArgs, controllerManagerArgs, etcdArgs, kwokArgs, schedulerArgs } from './flags.js';
import { renderKubeconfig } from './kubeconfig.js';
import {
  createModelHost,
  installSimulatedRoute,
  removeModelHost,
  removeSimulatedRoute,
  type ModelHost,
} from './network.js';
import { ensureNodeBinaries } from './node-binaries.js';
import { DEFAULT_NODES, kwokStages, SIMULATED_NODE_LABEL, simulatedNodes, type NodeShape } from './nodes.js';
import { cacheRoot, runsDir } from './paths.js';
import { freeLoopbackPorts, isPortConflict } from './ports.js';
import { RunningProcesses } from './processes.js';
import {
  apiserverReady,
  apiserverRequest,
  componentHealthy,
  etcdHealthy,
  nodesReady,
  waitUntilReady,
} from './readiness.js';
import { cleanupStaleRuns, otherLiveRuns } from './run-registry.js';

export interface ControlPlane {
  /** A kubeconfig with the admin token (group system:masters) and the apiserver's CA embedded. */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:PORT */
  readonly server: string;
  readonly adminToken: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  readonly caFile: string;
  /** http://127.0.0.1:PORT: direct etcd access, e.g. to compact it and so force 410 Gone on old watches. */
  readonly etcdEndpoint: string;
  readonly dataDir: string;
  /** The Kubernetes release running, e.g. v1.37.2. */
  readonly version: string;
  /** The kubectl built with it. */
  readonly kubectl: string;
  /** Where model servers listen for the gateway (network.ts). */
  readonly modelHost: ModelHost;
  /** The simulated Nodes' names. */
  readonly nodes: readonly string[];
  /** The real node, when asked for (StartControlPlaneOptions.realNode). */
  readonly realNode?: RealNode;
  /** Ends every component (SIGTERM, then SIGKILL), removes the model host and a temporary data dir. Idempotent. */
  stop(): Promise<void>;
  /**
   * Ends only kube-apiserver (SIGTERM, then SIGKILL); etcd keeps running with all data, so fault tests can
   * see clients lose the apiserver and can change etcd behind its back. A no-op when it is not running.
   */
  stopApiserver(): Promise<void>;
  /**
   * Starts kube-apiserver again with the same flags, port, certificates, tokens and etcd (its log is
   * appended to), and resolves once it is ready. Rejects while it is still running or after stop().
   */
  startApiserver(): Promise<void>;
}

export interface StartControlPlaneOptions {
  /** Keep etcd's data here across runs; default: a temporary directory removed by stop(). */
  readonly dataDir?: string;
  readonly log?: (line: string) => void;
  /** More bearer-token users, e.g. an unprivileged one for RBAC tests. */
  readonly extraTokens?: readonly TokenUser[];
  /** Default off, so that compacting etcd makes old watches fail with 410 Gone (see flags.ts). */
  readonly watchCache?: boolean;
  readonly readyTimeoutMs?: number;
  /** Default: EO_KUBE_RELEASE's, else the newest (binaries.ts). */
  readonly release?: KubernetesRelease;
  readonly nodes?: NodeShape;
  /**
   * Add one real node (kubelet + containerd, node.ts) beside the kwok Nodes, with the local registry it pulls
   * from. One per machine: refused while another cluster has one, unless realNodeWaitMs says how long to wait
   * for it (test files and parallel runs take turns).
   */
  readonly realNode?: boolean;
  readonly realNodeWaitMs?: number;
  /**
   * Run kube-controller-manager without its client rate limit (kwokctl's --disable-qps-limits): its controllers
   * start about 5 s sooner on a fresh cluster (flags.ts). Default off: benchmarks are paced by the limit a
   * cluster has by default; `dev` sets it, a fresh cluster on every start.
   */
  readonly unthrottledControllerManager?: boolean;
  /** Where the components' loopback ports come from (default: free ones the kernel picks); tests hand out a taken one. */
  readonly ports?: (count: number) => Promise<number[]>;
}

const PORT_ATTEMPTS = 3;

/** The identities the components act as: the names Kubernetes' bootstrap RBAC binds its roles to. */
const COMPONENT_USERS = {
  controllerManager: 'system:kube-controller-manager',
  scheduler: 'system:kube-scheduler',
} as const;

/**
 * Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with its simulated Nodes on
 * free loopback ports, and waits until the Nodes are Ready.
 */
export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  for (const stale of await cleanupStaleRuns(runsDir())) log(`ended a leftover ${stale}`);
  // Before anything starts: a second cluster asking for a real node is refused at once.
  const nodeLock = opts.realNode === true ? await claimRealNode(log, opts.realNodeWaitMs ?? 0) : undefined;
  try {
    return await startClusterProcesses(opts, log, nodeLock);
  } catch (err) {
    await nodeLock?.release();
    throw err;
  }
}

/** The start of the name of a data dir the control plane makes for itself under the temporary directory. */
export const DATA_DIR_PREFIX = 'eo-control-plane-';

async function startClusterProcesses(
  opts: StartControlPlaneOptions,
  log: (line: string) => void,
  nodeLock: FileLock | undefined,
): Promise<ControlPlane> {
  const release = opts.release ?? selectedRelease();
  // On a cold start the node's own builds (containerd, the registry) run beside Kubernetes', not after it. A
  // failure is left to startRealNode's own call, which reports it (the cache then holds whatever did build).
  // Both awaited, so a failed one never leaves the other running into a process that is about to exit.
  const nodeBuilds = nodeLock !== undefined ? ensureNodeBinaries(log) : undefined;
  const clusterBuilds = ensureClusterBinaries(release, log);
  await Promise.allSettled([clusterBuilds, nodeBuilds]);
  const bins = await clusterBuilds;

  const removeDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), DATA_DIR_PREFIX)));
  const logDir = join(dataDir, 'logs');
  await mkdir(logDir, { recursive: true });
  log(`Kubernetes ${release.version}; data dir and logs: ${dataDir}`);
  const creds = await writeCredentials(join(dataDir, 'pki'));
  const caPem = await readFile(creds.caFile, 'utf8');
  const adminToken = randomToken();
  const componentTokens = { controllerManager: randomToken(), scheduler: randomToken() };
  const nodeTokens = { kubelet: randomToken(), kubeProxy: randomToken() };
  const tokenAuthFile = join(dataDir, 'tokens.csv');
  await writeFile(
    tokenAuthFile,
    renderTokenFile([
      { token: adminToken, user: 'admin', uid: 'admin', groups: ['system:masters'] },
      {
        token: componentTokens.controllerManager,
        user: COMPONENT_USERS.controllerManager,
        uid: 'kube-controller-manager',
        groups: [],
      },
      { token: componentTokens.scheduler, user: COMPONENT_USERS.scheduler, uid: 'kube-scheduler', groups: [] },
      ...(nodeLock !== undefined ? realNodeTokenUsers(nodeTokens.kubelet, nodeTokens.kubeProxy) : []),
      ...(opts.extraTokens ?? []),
    ]),
    { mode: 0o600 },
  );

  const run = new RunningProcesses(dataDir, removeDataDir);
  await run.record();
  const onExit = (): void => run.killNow();
  process.on('exit', onExit);
  let modelHost: ModelHost | undefined;
  let startedNode: StartedRealNode | undefined;
  const releaseNetwork = async (): Promise<void> => {
    await startedNode?.closeRelay();
    // The real node first: its processes are gone (stopAll), what it made goes now, then its lock.
    const cleanup = await run.releaseCleanup();
    if (cleanup !== undefined) await runCleanupScript(cleanup);
    await nodeLock?.release();
    const network = await run.releaseNetwork();
    if (network !== undefined) await removeModelHost(network);
    if (!(await otherLiveRuns(runsDir(), run.recordPath))) await removeSimulatedRoute();
  };
  try {
    modelHost = await withNetworkLock(async () => {
      await installSimulatedRoute();
      return createModelHost(randomBytes(4).toString('hex'));
    });
    await run.adoptNetwork(modelHost);
    log(`model host ${modelHost.netns} at ${modelHost.address}; simulated pods are unreachable by route`);

    for (let attempt = 1; ; attempt++) {
      const [etcdClientPort = 0, etcdPeerPort = 0, securePort = 0] = await (opts.ports ?? freeLoopbackPorts)(3);
      const etcdEndpoint = `http://127.0.0.1:${etcdClientPort}`;
      const server = `https://127.0.0.1:${securePort}`;

      const etcdLog = join(logDir, `etcd-${attempt}.log`);
      log(`starting etcd on ${etcdEndpoint}`);
      const etcd = await run.start(
        'etcd',
        bins.etcd,
        etcdArgs({ dataDir: join(dataDir, 'etcd'), clientPort: etcdClientPort, peerPort: etcdPeerPort }),
        etcdLog,
      );
      const etcdReady = await waitUntilReady(etcd, () => etcdHealthy(etcdEndpoint), 30_000);
      if (!etcdReady.ready) {
        if ((await retryable(etcdLog)) && attempt < PORT_ATTEMPTS) {
          await run.stopAll();
          continue;
        }
        throw new ControlPlaneError(`etcd did not start: ${etcdReady.why}${await tail(etcdLog)}`, etcdLog);
      }

      const apiLog = join(logDir, `kube-apiserver-${attempt}.log`);
      log(`starting kube-apiserver on ${server}`);
      const flags = apiserverArgs({
        etcdEndpoint,
        securePort,
        certDir: join(dataDir, 'pki'),
        ...creds,
        tokenAuthFile,
        watchCache: opts.watchCache ?? false,
        routeToEndpoints: nodeLock !== undefined,
      });
      const started = Date.now();
      let apiserver = await run.start('kube-apiserver', bins.kubeApiserver, flags, apiLog);
      const apiReady = await waitUntilReady(
        apiserver,
        () => apiserverReady(server, caPem, adminToken),
        opts.readyTimeoutMs ?? 120_000,
      );
      if (!apiReady.ready) {
        if ((await retryable(apiLog)) && attempt < PORT_ATTEMPTS) {
          await run.stopAll();
          continue;
        }
        throw new ControlPlaneError(
          `kube-apiserver did not become ready: ${apiReady.why}${await tail(apiLog)}`,
          apiLog,
        );
      }
      log(`kube-apiserver ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

      const kubeconfigPath = join(dataDir, 'kubeconfig');
      await writeFile(kubeconfigPath, renderKubeconfig({ server, token: adminToken, caPem }), { mode: 0o600 });
      const nodes = await startNodeComponents({
        run,
        bins,
        dataDir,
        logDir,
        server,
        caPem,
        adminToken,
        kubeconfigPath,
        componentTokens,
        creds,
        shape: opts.nodes ?? DEFAULT_NODES,
        unthrottledControllerManager: opts.unthrottledControllerManager === true,
        log,
      });
      if (nodeLock !== undefined)
        startedNode = await startRealNode({
          run,
          bins,
          server,
          caPem,
          caFile: creds.caFile,
          adminToken,
          kubeletToken: nodeTokens.kubelet,
          kubeProxyToken: nodeTokens.kubeProxy,
          log,
        });
      const realNode = startedNode?.node;

      let stopping: Promise<void> | undefined;
      // One change of the apiserver at a time: a stop racing a start would leave a process nobody tracks.
      let apiserverChange: Promise<void> = Promise.resolve();
      const changeApiserver = (change: () => Promise<void>): Promise<void> => {
        const next = apiserverChange.then(change);
        apiserverChange = next.catch(() => undefined);
        return next;
      };
      const host = modelHost;
      return {
        kubeconfigPath,
        server,
        adminToken,
        caFile: creds.caFile,
        etcdEndpoint,
        dataDir,
        version: release.version,
        kubectl: bins.kubectl,
        modelHost: host,
        nodes,
        ...(realNode !== undefined ? { realNode } : {}),
        stop: () => {
          stopping ??= (async () => {
            process.off('exit', onExit);
            await run.stopAll();
            await releaseNetwork();
            await run.forget();
          })();
          return stopping;
        },
        // After stop() there is nothing to stop, and stopOne() would write the run record stop() removed.
        stopApiserver: () =>
          changeApiserver(() => (stopping === undefined ? run.stopOne(apiserver) : Promise.resolve())),
        startApiserver: () =>
          changeApiserver(async () => {
            if (stopping !== undefined) throw new ControlPlaneError('the control plane was stopped; start a new one');
            if (apiserver.running)
              throw new ControlPlaneError('kube-apiserver is already running; stopApiserver() first');
            log(`starting kube-apiserver again on ${server}`);
            const restarted = Date.now();
            apiserver = await run.start('kube-apiserver', bins.kubeApiserver, flags, apiLog);
            if (stopping !== undefined) {
              // stop() ran while it was being spawned, possibly after stopAll() had emptied the list.
              await run.stopOne(apiserver);
              throw new ControlPlaneError('the control plane was stopped while kube-apiserver started again');
            }
            const ready = await waitUntilReady(
              apiserver,
              () => apiserverReady(server, caPem, adminToken),
              opts.readyTimeoutMs ?? 120_000,
            );
            if (!ready.ready) {
              // Nothing retries on another port here: clients hold this server's URL.
              await run.stopOne(apiserver);
              throw new ControlPlaneError(
                `kube-apiserver did not become ready again: ${ready.why}${await tail(apiLog)}`,
                apiLog,
              );
            }
            log(`kube-apiserver ready again in ${((Date.now() - restarted) / 1000).toFixed(1)} s`);
          }),
      };
    }
  } catch (err) {
    // Keep the data dir: the error names log files inside it.
    await run.stopAll();
    await releaseNetwork();
    await run.forget(false);
    process.off('exit', onExit);
    throw err;
  }
}

interface NodeComponentsInput {
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
async function startNodeComponents(c: NodeComponentsInput): Promise<string[]> {
  const [kcmPort = 0, schedulerPort = 0, kwokPort = 0] = await freeLoopbackPorts(3);
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
        `${proc.name} did not become ready: ${ready.why}${await tail(proc.logFile)}`,
        proc.logFile,
      );
  }
  c.log(
    `kube-controller-manager, kube-scheduler and ${names.length} kwok Nodes ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return names;
}

/** Route and address-slot changes are made by one control plane at a time on this machine. */
async function withNetworkLock<T>(fn: () => Promise<T>): Promise<T> {
  await mkdir(cacheRoot(), { recursive: true });
  const lock = await acquireFileLock(join(cacheRoot(), 'network.lock'), { pollMs: 200 });
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

async function retryable(logFile: string): Promise<boolean> {
  return isPortConflict(await readFile(logFile, 'utf8').catch(() => ''));
}

async function tail(logFile: string, lines = 15): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const last = text.trimEnd().split('\n').slice(-lines);
  return last.length > 0 && last[0] !== '' ? `\n  last lines of the log:\n    ${last.join('\n    ')}` : '';
}
