/**
 * One real node beside the kwok Nodes: a kubelet and containerd (with Debian's runc and CNI plugins) that
 * run real containers, pulled from the local registry (registry.ts). Pods live in the node's network
 * namespace (node-network.ts) and are scheduled here only when they ask (node-config.ts ON_REAL_NODE).
 *
 * The kubelet needs fixed paths and port 10250, so one real node runs per machine: a second start refuses.
 * The host is left as it was: the kubelet's sysctl writes land in bind-mounted files (node-config.ts
 * kubeletWrapper), and everything the node made is removed by one script (node-cleanup.ts) that the stop,
 * the watchdog and the next start's stale clean-up all run.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureDebianPackages } from '../../host/apt.js';
import type { ClusterBinaries } from '../binaries.js';
import type { ChildProcessGroup } from '../../host/child-process-group.js';
import type { TokenUser } from '../credentials.js';
import { capture } from '../../host/exec.js';
import { ControlPlaneError } from '../../host/errors.js';
import { acquireFileLock, lockIsStale, pidAlive, type FileLock } from '../../host/file-lock.js';
import { renderKubeconfig } from '../kubeconfig.js';
import { nodeCleanupScript } from './node-cleanup.js';
import { ensureNodeBinaries } from './node-binaries.js';
import {
  cniConfList,
  containerdConfig,
  FIXED_HOST_PATHS,
  KUBELET_SYSCTLS,
  kubeletArgs,
  kubeletConfig,
  kubeletWrapper,
  kubeProxyConfig,
  nodeLayout,
  registryHostsToml,
  REGISTRY_HOST,
  sysctlFile,
  type NodeLayout,
} from './node-config.js';
import { ensureNodeImages } from './node-images.js';
import { createNodeNetwork, inNodeNetwork, NODE_HOST_ADDRESS, NODE_POD_CIDR } from './node-network.js';
import { cacheRoot } from '../../host/paths.js';
import type { RunningProcesses } from '../processes.js';
import { apiserverRequest, nodesReady, waitUntilReady } from '../readiness.js';
import { realNodeBlocker, readHostFacts, REAL_NODE_HOW } from './node-host-support.js';
import { nodePreflight } from './node-preflight.js';
import { registryStorageDir, startRegistry } from './registry.js';
import { exposeApiserverToPods } from './node-apiserver.js';

/** Debian's runc and CNI plugins (iptables comes with the plugins). */
export const NODE_PACKAGES = ['runc', 'containernetworking-plugins', 'iptables'] as const;

export interface RealNode {
  /** The Node's name: this machine's hostname, which /etc/hosts resolves to a local address. */
  readonly name: string;
  readonly podCidr: string;
  /** host:port of the local registry; images named `<registry>/…` are pulled from it. */
  readonly registry: string;
  readonly root: string;
  /** containerd's socket, for `ctr --address` (node-config.ts NodeLayout). */
  readonly containerdSocket: string;
}

/** What the node's host side needs: it starts before the apiserver is up (prepareRealNode). */
export interface RealNodeHostInput {
  readonly run: RunningProcesses;
  readonly bins: ClusterBinaries;
  /** The cluster CA's file, which the kubelet trusts for its clients. */
  readonly caFile: string;
  /** Keep containerd's images between starts (realNodeImageStoreDir); otherwise they go with the node. */
  readonly keepImages: boolean;
  readonly log: (line: string) => void;
}

/** What joining the cluster needs once the apiserver is ready (joinRealNode). */
export interface RealNodeClusterInput {
  readonly server: string;
  readonly caPem: string;
  readonly adminToken: string;
  /** Bearer tokens the apiserver maps to the kubelet's and kube-proxy's users (realNodeTokenUsers). */
  readonly kubeletToken: string;
  readonly kubeProxyToken: string;
}

/** The real node's fixed places: one per machine. */
export function realNodeDir(): string {
  return join(cacheRoot(), 'real-node');
}
const cleanupScriptPath = (): string => join(realNodeDir(), 'cleanup.sh');

/**
 * containerd's root when the node keeps its images (`npm start`'s): kept between starts (and by the node's
 * clean-up), so a warm start finds the model's image pulled and unpacked. The one thing a stopped node leaves;
 * `rm -rf` it to reclaim the space. Tests' nodes start with an empty store, so they see real pulls.
 */
export function realNodeImageStoreDir(): string {
  return join(cacheRoot(), 'real-node-images');
}

export function realNodeName(): string {
  return hostname().toLowerCase();
}

/**
 * The kubelet's and kube-proxy's identities, for the apiserver's token file: kube-proxy's is the user
 * Kubernetes' bootstrap RBAC binds system:node-proxier to.
 */
export function realNodeTokenUsers(kubeletToken: string, kubeProxyToken: string): TokenUser[] {
  return [
    { token: kubeletToken, user: `system:node:${realNodeName()}`, uid: 'real-node-kubelet', groups: ['system:nodes'] },
    { token: kubeProxyToken, user: 'system:kube-proxy', uid: 'real-node-kube-proxy', groups: [] },
  ];
}

const ownerLockPath = (): string => join(realNodeDir(), 'owner.lock');

/** The live pid that holds the machine's real node now (another local cluster), if any. */
export async function realNodeOwner(): Promise<number | undefined> {
  const text = await readFile(ownerLockPath(), 'utf8').catch(() => '');
  return lockIsStale(text, pidAlive) ? undefined : Number.parseInt(text.trim(), 10);
}

/**
 * Takes the machine's real-node lock, or refuses with who holds it. A lock whose owner died is taken over,
 * and what that node left is removed first.
 */
export async function claimRealNode(log: (line: string) => void, waitMs = 0): Promise<FileLock> {
  await mkdir(realNodeDir(), { recursive: true });
  const lockPath = ownerLockPath();
  let owner = '';
  const onWait = (pid: string): void => {
    if (waitMs > 0 && owner !== pid)
      log(`waiting up to ${Math.round(waitMs / 1000)} s for pid ${pid}'s real node to stop`);
    owner = pid;
  };
  const lock = await acquireFileLock(lockPath, { timeoutMs: waitMs, onWait }).catch(() => {
    throw new ControlPlaneError(
      `a real node already runs on this machine (owned by pid ${owner || 'unknown'}, lock ${lockPath}): ` +
        'the kubelet needs fixed paths and port 10250, so only one local cluster at a time can have one; ' +
        'stop that cluster or start this one without a real node',
    );
  });
  if (existsSync(cleanupScriptPath())) {
    log('removing what the real node of a killed run left behind (its processes, mounts, cgroups, network)');
    await runCleanupScript(cleanupScriptPath());
  }
  return lock;
}

/**
 * Where the node would fail on a machine that can run it (node-preflight.ts: a fixed port taken, the disk too
 * full), one line per cause; empty when it can start. Best after a killed run's node was removed
 * (cleanupStaleRuns, claimRealNode), which frees what that run held.
 */
export async function realNodePreflight(): Promise<string[]> {
  await mkdir(cacheRoot(), { recursive: true });
  return nodePreflight({
    dataDir: cacheRoot(),
    binDir: join(cacheRoot(), 'bin'),
    keptStores: [realNodeImageStoreDir(), registryStorageDir()],
  });
}

/** Refuses, before anything is built, a machine that cannot run the node (node-host-support.ts) or where it would fail. */
export async function refuseUnfitMachine(): Promise<void> {
  const blocker = realNodeBlocker(await readHostFacts());
  if (blocker !== undefined)
    throw new ControlPlaneError(`this machine cannot run the real node: ${blocker}; it needs ${REAL_NODE_HOW}`);
  const problems = await realNodePreflight();
  if (problems.length > 0) throw new ControlPlaneError(problems.join('\n'));
}

/** Runs the node's clean-up script, if one is there, and removes it. */
export async function runCleanupScript(path: string): Promise<void> {
  if (!existsSync(path)) return;
  const r = await capture('/bin/bash', [path]);
  if (r.code !== 0) throw new ControlPlaneError(`the real node's clean-up (${path}) failed: ${r.stderr.trim()}`);
  await rm(path, { force: true });
}

export interface StartedRealNode {
  readonly node: RealNode;
  /** Ends the apiserver relay (node-apiserver.ts), which lives in this process. */
  closeRelay(): Promise<void>;
}

/** The node's host side, running: its layout, binaries and the time its start began. */
export interface PreparedRealNode {
  readonly layout: NodeLayout;
  readonly kubelet: string;
  readonly started: number;
  readonly host: RealNodeHostInput;
}

/**
 * The half of the node that needs no apiserver: its network, the registry (with the pause image), and containerd
 * ready. Runs beside etcd and kube-apiserver; joinRealNode then starts the kubelet and kube-proxy. The caller
 * holds claimRealNode's lock.
 */
export async function prepareRealNode(c: RealNodeHostInput): Promise<PreparedRealNode> {
  const started = Date.now();
  const root = join(realNodeDir(), 'root');
  const l = nodeLayout(root, c.keepImages ? realNodeImageStoreDir() : join(root, 'containerd', 'root'));
  const kubelet = c.bins.kubelet;
  if (kubelet === undefined)
    throw new ControlPlaneError(`Kubernetes ${c.bins.release.version}'s wrapper module builds no kubelet`);
  await mkdir(l.logDir, { recursive: true });
  const setupLog = join(l.logDir, 'setup.log');
  await ensureDebianPackages(NODE_PACKAGES, c.log, setupLog);
  const node = await ensureNodeBinaries(c.log);

  // Written before anything is made, so that whatever happens next is undone by it.
  const createdHostPaths = FIXED_HOST_PATHS.filter((p) => !existsSync(p));
  await writeFile(
    cleanupScriptPath(),
    nodeCleanupScript({
      root: l.root,
      imageStore: l.containerdRoot,
      shim: node.shim,
      createdHostPaths,
      daemons: [kubelet, node.containerd, node.registry, ...(c.bins.kubeProxy ? [c.bins.kubeProxy] : [])],
    }),
  );
  await chmod(cleanupScriptPath(), 0o700);
  await c.run.adoptCleanup(cleanupScriptPath());

  await createNodeNetwork();
  await writeNodeFiles(l, c);
  c.log(`real node network ${NODE_POD_CIDR} via ${NODE_HOST_ADDRESS}; starting the local registry on ${REGISTRY_HOST}`);
  await startRegistry(c.run, node.registry, l.root, l.logDir);
  await ensureNodeImages(c.log, setupLog);

  // The kubelet mounts volumes in its own mount namespace; a shared root dir carries them to containerd's.
  await mustRun('mount', ['--bind', l.kubeletRoot, l.kubeletRoot]);
  await mustRun('mount', ['--make-shared', l.kubeletRoot]);

  const [nsenter, nsArgs] = inNodeNetwork(node.containerd, ['--config', l.containerdConfig]);
  const containerd = await c.run.start('containerd', nsenter, nsArgs, join(l.logDir, 'containerd.log'), {
    // The runc shim is found next to containerd.
    env: { ...process.env, PATH: `${dirname(node.containerd)}:${process.env['PATH'] ?? ''}` },
    executable: node.containerd,
  });
  await mustBeReady(containerd, async () => {
    const r = await capture(node.ctr, ['--address', l.containerdSocket, 'version']);
    return r.code === 0 ? true : r.stderr.trim();
  });
  return { layout: l, kubelet, started, host: c };
}

/**
 * The kubelet and kube-proxy of a prepared node, joined to the cluster: resolves once the Node is Ready and the
 * `kubernetes` Service leads to the apiserver.
 */
export async function joinRealNode(p: PreparedRealNode, c: RealNodeClusterInput): Promise<StartedRealNode> {
  const { layout: l, kubelet, host } = p;
  await writeNodeKubeconfigs(l, c);
  const binding = await apiserverRequest(c.server, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    caPem: c.caPem,
    token: c.adminToken,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'endpoint-operator:real-node' },
      // The kubelet's role, as clusters before the Node authorizer bound it: this cluster authorizes by RBAC alone.
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `system:node:${realNodeName()}` }],
    },
  });
  if (binding.status !== 201 && binding.status !== 409)
    throw new ControlPlaneError(`binding the kubelet's role failed: ${binding.status} ${binding.body.slice(0, 300)}`);

  const kubeletProc = await host.run.start(
    'kubelet',
    'unshare',
    [
      '-m',
      '--propagation',
      'unchanged',
      '--',
      '/bin/bash',
      '-c',
      kubeletWrapper(l),
      'kubelet-wrapper',
      kubelet,
      ...kubeletArgs(l, { nodeIp: NODE_HOST_ADDRESS }),
    ],
    join(l.logDir, 'kubelet.log'),
    { executable: kubelet },
  );
  await mustBeReady(kubeletProc, () => nodesReady(c.server, c.caPem, c.adminToken, [realNodeName()]), 120_000);

  const kubeProxy = host.bins.kubeProxy;
  if (kubeProxy === undefined)
    throw new ControlPlaneError(`Kubernetes ${host.bins.release.version}'s wrapper module builds no kube-proxy`);
  const relay = await exposeApiserverToPods(c.server, c.caPem, c.adminToken);
  const [ns, proxyArgs] = inNodeNetwork(kubeProxy, [`--config=${l.kubeProxyConfig}`, '--v=1']);
  await host.run
    .start('kube-proxy', ns, proxyArgs, join(l.logDir, 'kube-proxy.log'), { executable: kubeProxy })
    .catch(async (err: unknown) => {
      await relay.close();
      throw err;
    });
  // Counted from prepareRealNode's start, which ran beside the apiserver's.
  host.log(
    `real node ${realNodeName()} Ready in ${((Date.now() - p.started) / 1000).toFixed(1)} s (logs: ${l.logDir})`,
  );
  return {
    node: {
      name: realNodeName(),
      podCidr: NODE_POD_CIDR,
      registry: REGISTRY_HOST,
      root: l.root,
      containerdSocket: l.containerdSocket,
    },
    closeRelay: () => relay.close(),
  };
}

/** The files containerd, the CNI plugins, the kubelet and kube-proxy read that name no apiserver. */
async function writeNodeFiles(l: NodeLayout, c: RealNodeHostInput): Promise<void> {
  for (const dir of [l.containerdRoot, l.containerdState, l.cniConfDir, l.cniDataDir, l.kubeletRoot, l.podLogsDir])
    await mkdir(dir, { recursive: true });
  await writeFile(l.containerdConfig, containerdConfig(l));
  const hosts = registryHostsToml();
  await mkdir(join(l.registryHostsDir, hosts.dir), { recursive: true });
  await writeFile(join(l.registryHostsDir, hosts.dir, 'hosts.toml'), hosts.text);
  await writeFile(join(l.cniConfDir, '10-eo-real-node.conflist'), cniConfList(l));
  await writeFile(l.kubeletConfig, kubeletConfig(l, { clientCaFile: c.caFile }));
  await writeFile(l.kubeProxyConfig, kubeProxyConfig(l, realNodeName()));
  await mkdir(l.sysctlDir, { recursive: true });
  for (const [key, value] of Object.entries(KUBELET_SYSCTLS)) await writeFile(sysctlFile(l, key), `${value}\n`);
}

/** The kubelet's and kube-proxy's kubeconfigs: the apiserver's address is known once it is up. */
async function writeNodeKubeconfigs(l: NodeLayout, c: RealNodeClusterInput): Promise<void> {
  // kube-proxy runs in the node namespace, where 127.0.0.1 is not this one's: it comes in as pods do.
  const viaRelay = new URL(c.server);
  viaRelay.hostname = NODE_HOST_ADDRESS;
  await writeFile(
    l.kubeProxyKubeconfig,
    renderKubeconfig({
      server: viaRelay.origin,
      token: c.kubeProxyToken,
      caPem: c.caPem,
      user: 'kube-proxy',
    }),
    { mode: 0o600 },
  );
  await writeFile(
    l.kubeletKubeconfig,
    renderKubeconfig({ server: c.server, token: c.kubeletToken, caPem: c.caPem, user: 'kubelet' }),
    { mode: 0o600 },
  );
}

async function mustRun(cmd: string, args: readonly string[]): Promise<void> {
  const r = await capture(cmd, args);
  if (r.code !== 0) throw new ControlPlaneError(`${cmd} ${args.join(' ')} failed: ${r.stderr.trim()}`);
}

async function mustBeReady(proc: ChildProcessGroup, probe: () => Promise<true | string>, ms = 30_000): Promise<void> {
  const ready = await waitUntilReady(proc, probe, ms);
  if (!ready.ready) {
    const text = await readFile(proc.logFile, 'utf8').catch(() => '');
    const tail = text.trimEnd().split('\n').slice(-15).join('\n    ');
    throw new ControlPlaneError(`${proc.name} did not become ready: ${ready.why}\n    ${tail}`, proc.logFile);
  }
}
