import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClusterBinaries, selectedRelease, type KubernetesRelease } from './binaries.js';
import type { ChildProcessGroup } from '../host/child-process-group.js';
import { randomToken, renderTokenFile, writeCredentials } from './credentials.js';
import type { TokenUser } from './credentials.js';
import { ControlPlaneError } from '../host/errors.js';
import { allSettledOrThrow } from '../host/all-settled.js';
import { acquireFileLock, type FileLock } from '../host/file-lock.js';
import {
  claimRealNode,
  joinRealNode,
  prepareRealNode,
  refuseUnfitMachine,
  runCleanupScript,
  realNodeTokenUsers,
  type RealNode,
  type StartedRealNode,
} from './real-node/node.js';
import { apiserverArgs, etcdArgs } from './flags.js';
import { renderKubeconfig } from './kubeconfig.js';
import {
  createModelHost,
  installSimulatedRoute,
  removeModelHost,
  removeSimulatedRoute,
  type ModelHost,
} from './network.js';
import { COMPONENT_USERS, startNodeComponents } from './node-components.js';
import { ensureNodeBinaries } from './real-node/node-binaries.js';
import { DEFAULT_NODES, type NodeShape } from './nodes.js';
import { cacheRoot, runsDir } from '../host/paths.js';
import { distinctFreePorts, isPortConflict } from './ports.js';
import { RunningProcesses } from './processes.js';
import { apiserverReady, etcdHealthy, logTail, waitUntilReady } from './readiness.js';
import { cleanupStaleRuns, otherLiveRuns, staleRunsLine } from '../host/run-registry.js';

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
   * Keep the real node's image store (containerd's root) between starts, so a warm start neither pulls nor unpacks
   * an image again (`npm start`). Default off: tests see real pulls into an empty store.
   */
  readonly keepNodeImages?: boolean;
  /**
   * Run kube-controller-manager without its client rate limit (kwokctl's --disable-qps-limits): its controllers
   * start about 5 s sooner on a fresh cluster (flags.ts). Default off: benchmarks are paced by the limit a
   * cluster has by default; `dev` sets it, a fresh cluster on every start.
   */
  readonly unthrottledControllerManager?: boolean;
  /** Where the components' loopback ports come from (default: free ones the kernel picks); tests hand out a taken one. */
  readonly ports?: (count: number) => Promise<number[]>;
  /**
   * Work that needs the apiserver alone (`dev` installs its CRDs), run while the Nodes join rather than after:
   * given the admin kubeconfig's path; the start fails if it fails.
   */
  readonly whileNodesJoin?: (kubeconfigPath: string) => Promise<void>;
}

const PORT_ATTEMPTS = 3;

/**
 * Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with its simulated Nodes on
 * free loopback ports, and waits until the Nodes are Ready.
 */
export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  const stale = staleRunsLine(await cleanupStaleRuns(runsDir()));
  if (stale !== undefined) log(stale);
  // Before anything starts: a second cluster asking for a real node is refused at once.
  const nodeLock = opts.realNode === true ? await claimRealNode(log, opts.realNodeWaitMs ?? 0) : undefined;
  try {
    if (nodeLock !== undefined) await refuseUnfitMachine();
    return await startClusterProcesses(opts, log, nodeLock);
  } catch (err) {
    await nodeLock?.release();
    throw err;
  }
}

/** The start of the name of a data dir the control plane makes for itself under the temporary directory. */
export const DATA_DIR_PREFIX = 'eo-control-plane-';

type ClusterBinaries = Awaited<ReturnType<typeof ensureClusterBinaries>>;
type Credentials = Awaited<ReturnType<typeof writeCredentials>>;

/** The steps of a start, in order; each failure after the run record exists stops what had started. */
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
  const dirs = await prepareDataDir(opts, release, log);
  const creds = await writeCredentials(join(dirs.dataDir, 'pki'));
  const caPem = await readFile(creds.caFile, 'utf8');
  const tokens = await writeTokens(dirs.dataDir, opts, nodeLock !== undefined);

  const run = new RunningProcesses(dirs.dataDir, dirs.removeDataDir);
  await run.record();
  const onExit = (): void => run.killNow();
  process.on('exit', onExit);
  const network = new NetworkRelease(run, nodeLock);
  try {
    const modelHost = await startModelHost(run, log);
    // The real node's host side (network, registry, containerd) needs no apiserver: it starts beside etcd and
    // kube-apiserver.
    const [api, prepared] = await allSettledOrThrow([
      startEtcdAndApiserver({ opts, run, bins, dirs, creds, caPem, tokens, nodeLock, log }),
      nodeLock !== undefined
        ? prepareRealNode({ run, bins, caFile: creds.caFile, keepImages: opts.keepNodeImages === true, log })
        : undefined,
    ]);
    const kubeconfigPath = join(dirs.dataDir, 'kubeconfig');
    await writeFile(kubeconfigPath, renderKubeconfig({ server: api.server, token: tokens.admin, caPem }), {
      mode: 0o600,
    });
    // The kwok Nodes' components and the real node's kubelet join the apiserver at once, beside whileNodesJoin.
    const [nodes] = await allSettledOrThrow([
      startNodeComponents({
        run,
        bins,
        dataDir: dirs.dataDir,
        logDir: dirs.logDir,
        server: api.server,
        caPem,
        adminToken: tokens.admin,
        kubeconfigPath,
        componentTokens: tokens.components,
        creds,
        shape: opts.nodes ?? DEFAULT_NODES,
        unthrottledControllerManager: opts.unthrottledControllerManager === true,
        log,
      }),
      prepared !== undefined
        ? joinRealNode(prepared, {
            server: api.server,
            caPem,
            adminToken: tokens.admin,
            kubeletToken: tokens.node.kubelet,
            kubeProxyToken: tokens.node.kubeProxy,
          }).then((started) => (network.node = started))
        : undefined,
      opts.whileNodesJoin?.(kubeconfigPath),
    ]);
    const realNode = network.node?.node;
    return {
      kubeconfigPath,
      server: api.server,
      adminToken: tokens.admin,
      caFile: creds.caFile,
      etcdEndpoint: api.etcdEndpoint,
      dataDir: dirs.dataDir,
      version: release.version,
      kubectl: bins.kubectl,
      modelHost,
      nodes,
      ...(realNode !== undefined ? { realNode } : {}),
      ...apiserverControls({ opts, run, bins, api, caPem, adminToken: tokens.admin, network, onExit, log }),
    };
  } catch (err) {
    // Keep the data dir: the error names log files inside it.
    await run.stopAll();
    await network.release();
    await run.forget(false);
    process.off('exit', onExit);
    throw err;
  }
}

interface DataDir {
  readonly dataDir: string;
  readonly logDir: string;
  /** A temporary directory, removed by stop(); one the caller named is kept. */
  readonly removeDataDir: boolean;
}

async function prepareDataDir(
  opts: StartControlPlaneOptions,
  release: KubernetesRelease,
  log: (line: string) => void,
): Promise<DataDir> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), DATA_DIR_PREFIX)));
  const logDir = join(dataDir, 'logs');
  await mkdir(logDir, { recursive: true });
  log(`Kubernetes ${release.version}; data dir and logs: ${dataDir}`);
  return { dataDir, logDir, removeDataDir: opts.dataDir === undefined };
}

interface Tokens {
  readonly admin: string;
  readonly components: { readonly controllerManager: string; readonly scheduler: string };
  readonly node: { readonly kubelet: string; readonly kubeProxy: string };
  /** The apiserver's --token-auth-file. */
  readonly file: string;
}

/** The bearer tokens of the admin, the components, the real node's kubelet and kube-proxy, and opts.extraTokens. */
async function writeTokens(dataDir: string, opts: StartControlPlaneOptions, realNode: boolean): Promise<Tokens> {
  const tokens = {
    admin: randomToken(),
    components: { controllerManager: randomToken(), scheduler: randomToken() },
    node: { kubelet: randomToken(), kubeProxy: randomToken() },
    file: join(dataDir, 'tokens.csv'),
  };
  await writeFile(
    tokens.file,
    renderTokenFile([
      { token: tokens.admin, user: 'admin', uid: 'admin', groups: ['system:masters'] },
      {
        token: tokens.components.controllerManager,
        user: COMPONENT_USERS.controllerManager,
        uid: 'kube-controller-manager',
        groups: [],
      },
      { token: tokens.components.scheduler, user: COMPONENT_USERS.scheduler, uid: 'kube-scheduler', groups: [] },
      ...(realNode ? realNodeTokenUsers(tokens.node.kubelet, tokens.node.kubeProxy) : []),
      ...(opts.extraTokens ?? []),
    ]),
    { mode: 0o600 },
  );
  return tokens;
}

/** What a stop (or a failed start) gives back besides the processes: the real node, its lock, the model host, the route. */
class NetworkRelease {
  node: StartedRealNode | undefined;

  constructor(
    private readonly run: RunningProcesses,
    private readonly nodeLock: FileLock | undefined,
  ) {}

  async release(): Promise<void> {
    await this.node?.closeRelay();
    // The real node first: its processes are gone (stopAll), what it made goes now, then its lock.
    const cleanup = await this.run.releaseCleanup();
    if (cleanup !== undefined) await runCleanupScript(cleanup);
    await this.nodeLock?.release();
    const network = await this.run.releaseNetwork();
    if (network !== undefined) await removeModelHost(network);
    if (!(await otherLiveRuns(runsDir(), this.run.recordPath))) await removeSimulatedRoute();
  }
}

async function startModelHost(run: RunningProcesses, log: (line: string) => void): Promise<ModelHost> {
  const modelHost = await withNetworkLock(async () => {
    await installSimulatedRoute();
    return createModelHost(randomBytes(4).toString('hex'));
  });
  await run.adoptNetwork(modelHost);
  log(`model host ${modelHost.netns} at ${modelHost.address}; simulated pods are unreachable by route`);
  return modelHost;
}

interface ApiserverInput {
  readonly opts: StartControlPlaneOptions;
  readonly run: RunningProcesses;
  readonly bins: ClusterBinaries;
  readonly dirs: DataDir;
  readonly creds: Credentials;
  readonly caPem: string;
  readonly tokens: Tokens;
  readonly nodeLock: FileLock | undefined;
  readonly log: (line: string) => void;
}

interface StartedApiserver {
  readonly etcdEndpoint: string;
  readonly server: string;
  readonly process: ChildProcessGroup;
  readonly flags: string[];
  readonly logFile: string;
}

/** etcd, then kube-apiserver on free loopback ports: again on other ports when one was taken meanwhile. */
async function startEtcdAndApiserver(c: ApiserverInput): Promise<StartedApiserver> {
  const { opts, run, dirs, log } = c;
  for (let attempt = 1; ; attempt++) {
    const [etcdClientPort = 0, etcdPeerPort = 0, securePort = 0] = await (opts.ports ?? distinctFreePorts)(3);
    const etcdEndpoint = `http://127.0.0.1:${etcdClientPort}`;
    const server = `https://127.0.0.1:${securePort}`;

    const etcdLog = join(dirs.logDir, `etcd-${attempt}.log`);
    log(`starting etcd on ${etcdEndpoint}`);
    const etcd = await run.start(
      'etcd',
      c.bins.etcd,
      etcdArgs({ dataDir: join(dirs.dataDir, 'etcd'), clientPort: etcdClientPort, peerPort: etcdPeerPort }),
      etcdLog,
    );
    const etcdReady = await waitUntilReady(etcd, () => etcdHealthy(etcdEndpoint), 30_000);
    if (!etcdReady.ready) {
      if ((await retryable(etcdLog)) && attempt < PORT_ATTEMPTS) {
        // Only this attempt's own: the real node's host side starts meanwhile.
        await run.stopOne(etcd);
        continue;
      }
      throw new ControlPlaneError(`etcd did not start: ${etcdReady.why}${await logTail(etcdLog)}`, etcdLog);
    }

    const apiLog = join(dirs.logDir, `kube-apiserver-${attempt}.log`);
    log(`starting kube-apiserver on ${server}`);
    const flags = apiserverArgs({
      etcdEndpoint,
      securePort,
      certDir: join(dirs.dataDir, 'pki'),
      ...c.creds,
      tokenAuthFile: c.tokens.file,
      watchCache: opts.watchCache ?? false,
      routeToEndpoints: c.nodeLock !== undefined,
    });
    const started = Date.now();
    const apiserver = await run.start('kube-apiserver', c.bins.kubeApiserver, flags, apiLog);
    const apiReady = await waitUntilReady(
      apiserver,
      () => apiserverReady(server, c.caPem, c.tokens.admin),
      opts.readyTimeoutMs ?? 120_000,
    );
    if (!apiReady.ready) {
      if ((await retryable(apiLog)) && attempt < PORT_ATTEMPTS) {
        await run.stopOne(apiserver);
        await run.stopOne(etcd);
        continue;
      }
      throw new ControlPlaneError(
        `kube-apiserver did not become ready: ${apiReady.why}${await logTail(apiLog)}`,
        apiLog,
      );
    }
    log(`kube-apiserver ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { etcdEndpoint, server, process: apiserver, flags, logFile: apiLog };
  }
}

interface ControlsInput {
  readonly opts: StartControlPlaneOptions;
  readonly run: RunningProcesses;
  readonly bins: ClusterBinaries;
  readonly api: StartedApiserver;
  readonly caPem: string;
  readonly adminToken: string;
  readonly network: NetworkRelease;
  readonly onExit: () => void;
  readonly log: (line: string) => void;
}

/** ControlPlane's stop(), stopApiserver() and startApiserver() over a started cluster. */
function apiserverControls(c: ControlsInput): Pick<ControlPlane, 'stop' | 'stopApiserver' | 'startApiserver'> {
  const { run, api, log } = c;
  let apiserver = api.process;
  let stopping: Promise<void> | undefined;
  // One change of the apiserver at a time: a stop racing a start would leave a process nobody tracks.
  let apiserverChange: Promise<void> = Promise.resolve();
  const changeApiserver = (change: () => Promise<void>): Promise<void> => {
    const next = apiserverChange.then(change);
    apiserverChange = next.catch(() => undefined);
    return next;
  };
  return {
    stop: () => {
      stopping ??= (async () => {
        process.off('exit', c.onExit);
        await run.stopAll();
        await c.network.release();
        await run.forget();
      })();
      return stopping;
    },
    // After stop() there is nothing to stop, and stopOne() would write the run record stop() removed.
    stopApiserver: () => changeApiserver(() => (stopping === undefined ? run.stopOne(apiserver) : Promise.resolve())),
    startApiserver: () =>
      changeApiserver(async () => {
        if (stopping !== undefined) throw new ControlPlaneError('the control plane was stopped; start a new one');
        if (apiserver.running) throw new ControlPlaneError('kube-apiserver is already running; stopApiserver() first');
        log(`starting kube-apiserver again on ${api.server}`);
        const restarted = Date.now();
        apiserver = await run.start('kube-apiserver', c.bins.kubeApiserver, api.flags, api.logFile);
        if (stopping !== undefined) {
          // stop() ran while it was being spawned, possibly after stopAll() had emptied the list.
          await run.stopOne(apiserver);
          throw new ControlPlaneError('the control plane was stopped while kube-apiserver started again');
        }
        const ready = await waitUntilReady(
          apiserver,
          () => apiserverReady(api.server, c.caPem, c.adminToken),
          c.opts.readyTimeoutMs ?? 120_000,
        );
        if (!ready.ready) {
          // Nothing retries on another port here: clients hold this server's URL.
          await run.stopOne(apiserver);
          throw new ControlPlaneError(
            `kube-apiserver did not become ready again: ${ready.why}${await logTail(api.logFile)}`,
            api.logFile,
          );
        }
        log(`kube-apiserver ready again in ${((Date.now() - restarted) / 1000).toFixed(1)} s`);
      }),
  };
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
