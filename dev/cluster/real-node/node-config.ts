/**
 * The real node's configuration files and directory layout (node.ts). Pure, so the exact settings are
 * unit-tested; each setting that is not a default says why it is there.
 */
import { join } from 'node:path';
import { NODE_HOST_ADDRESS, NODE_NS_ADDRESS, NODE_POD_CIDR, NODE_POD_GATEWAY } from './node-network.js';

/** Pods are scheduled on the real node only when they ask for it: the kwok Nodes keep every other pod. */
export const REAL_NODE_LABEL = 'endpoint-operator.dev/real-node';
export const REAL_NODE_TAINT = { key: REAL_NODE_LABEL, value: 'true', effect: 'NoSchedule' } as const;

/** What a pod spec needs to run on the real node. */
export const ON_REAL_NODE = {
  nodeSelector: { [REAL_NODE_LABEL]: 'true' },
  tolerations: [{ key: REAL_NODE_LABEL, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
} as const;

/** The local registry: on this namespace's end of the node's link, reachable from containerd and from podman here. */
export const REGISTRY_PORT = 5000;
export const REGISTRY_HOST = `${NODE_HOST_ADDRESS}:${REGISTRY_PORT}`;
/** The sandbox image every pod starts with, made locally (node-images.ts) and pinned so it is never collected. */
export const PAUSE_IMAGE = `${REGISTRY_HOST}/endpoint-operator/pause:1`;

/** Debian's paths (runc, containernetworking-plugins). */
export const RUNC = '/usr/sbin/runc';
export const CNI_BIN_DIR = '/usr/lib/cni';

/** The kubelet's HTTPS port: fixed by the apiserver's default for reaching kubelets. */
export const KUBELET_PORT = 10250;
/** containerd's streaming server (exec, attach, port-forward), in the node namespace: no clash with this one. */
export const STREAM_PORT = 10010;

/**
 * Paths the kubelet or the CNI plugins use whatever they are told: created on start when missing, and then
 * removed again on stop (a path that was already there is left alone).
 */
export const FIXED_HOST_PATHS = ['/var/lib/kubelet', '/var/log/containers', '/var/lib/cni', '/run/containerd'] as const;

/**
 * The sysctls the kubelet sets on start (`setupKernelTunables`): it runs in a mount namespace where these
 * /proc/sys files are bind-mounted from files already holding these values, so the host's stay as they are.
 */
export const KUBELET_SYSCTLS: Readonly<Record<string, string>> = {
  'vm/overcommit_memory': '1',
  'vm/panic_on_oom': '0',
  'kernel/panic': '10',
  'kernel/panic_on_oops': '1',
  'kernel/keys/root_maxkeys': '1000000',
  'kernel/keys/root_maxbytes': '25000000',
};

/** The file in the node's sysctl dir standing in for /proc/sys/`key`. */
export function sysctlFile(l: NodeLayout, key: string): string {
  return join(l.sysctlDir, key.replaceAll('/', '.'));
}

export interface NodeLayout {
  /** Everything the node writes but its image store, removed on stop. */
  readonly root: string;
  readonly containerdConfig: string;
  /**
   * containerd's root, the node's image store (content, unpacked snapshots, image metadata): outside `root` and
   * kept between starts, so a warm start neither pulls nor unpacks the model's image again. Its runtime state
   * (containerdState, the pods) is under `root` and goes.
   */
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly containerdSocket: string;
  readonly registryHostsDir: string;
  readonly cniConfDir: string;
  readonly cniDataDir: string;
  readonly kubeletRoot: string;
  readonly kubeletConfig: string;
  readonly kubeletKubeconfig: string;
  readonly podLogsDir: string;
  readonly sysctlDir: string;
  readonly kubeProxyConfig: string;
  readonly kubeProxyKubeconfig: string;
  readonly logDir: string;
}

export function nodeLayout(root: string, imageStore: string): NodeLayout {
  return {
    root,
    containerdConfig: join(root, 'containerd', 'config.toml'),
    containerdRoot: imageStore,
    containerdState: join(root, 'containerd', 'state'),
    containerdSocket: join(root, 'containerd', 'containerd.sock'),
    registryHostsDir: join(root, 'containerd', 'certs.d'),
    cniConfDir: join(root, 'cni', 'net.d'),
    cniDataDir: join(root, 'cni', 'ipam'),
    kubeletRoot: join(root, 'kubelet'),
    kubeletConfig: join(root, 'kubelet-config.yaml'),
    kubeletKubeconfig: join(root, 'kubelet.kubeconfig'),
    podLogsDir: join(root, 'pod-logs'),
    sysctlDir: join(root, 'sysctl'),
    kubeProxyConfig: join(root, 'kube-proxy-config.yaml'),
    kubeProxyKubeconfig: join(root, 'kube-proxy.kubeconfig'),
    logDir: join(root, 'logs'),
  };
}

const toml = (s: string): string => JSON.stringify(s);

/** containerd's config (version 3, migrated by containerd 2.x itself): everything under the node's root. */
export function containerdConfig(l: NodeLayout): string {
  return `version = 3
root = ${toml(l.containerdRoot)}
state = ${toml(l.containerdState)}
temp = ${toml(join(l.root, 'containerd', 'tmp'))}

[grpc]
  address = ${toml(l.containerdSocket)}

[ttrpc]
  address = ${toml(`${l.containerdSocket}.ttrpc`)}

[plugins.'io.containerd.grpc.v1.cri']
  # The kubelet (in the host's namespace) proxies exec, attach and port-forward here.
  stream_server_address = ${toml(NODE_NS_ADDRESS)}
  stream_server_port = ${toml(String(STREAM_PORT))}

[plugins.'io.containerd.cri.v1.runtime']
  # Root here lacks CAP_SYS_RESOURCE: without this runc fails to lower oom_score_adj and no sandbox starts.
  restrict_oom_score_adj = true
  # Pods' network namespaces under the state dir, not /var/run/netns.
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  cdi_spec_dirs = [${toml(join(l.root, 'cdi'))}]

  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"

    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = ${toml(RUNC)}
        Root = ${toml(join(l.containerdState, 'runc'))}
        # The machine has no systemd to ask for cgroups; the kubelet uses cgroupfs too.
        SystemdCgroup = false

  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [${toml(CNI_BIN_DIR)}]
    conf_dir = ${toml(l.cniConfDir)}

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"

  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = ${toml(PAUSE_IMAGE)}

  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = ${toml(l.registryHostsDir)}

[plugins.'io.containerd.internal.v1.opt']
  path = ${toml(join(l.root, 'containerd', 'opt'))}

[plugins.'io.containerd.nri.v1.nri']
  disable = true
`;
}

/** `<config_path>/<host:port>/hosts.toml`: the local registry speaks plain HTTP. */
export function registryHostsToml(): { readonly dir: string; readonly text: string } {
  return {
    dir: REGISTRY_HOST,
    text: `server = "http://${REGISTRY_HOST}"

[host."http://${REGISTRY_HOST}"]
  capabilities = ["pull", "resolve"]
`,
  };
}

/** One bridge in the node namespace; host-local addresses from the node's pod range. */
export function cniConfList(l: NodeLayout): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'eo-real-node',
      plugins: [
        {
          type: 'bridge',
          bridge: 'eorn0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: NODE_POD_CIDR, gateway: NODE_POD_GATEWAY }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: l.cniDataDir,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeletConfigInput {
  readonly clientCaFile: string;
}

/** The KubeletConfiguration (JSON is YAML). */
export function kubeletConfig(l: NodeLayout, c: KubeletConfigInput): string {
  return `${JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // Only this machine reaches it: the apiserver dials the Node's Hostname address, which /etc/hosts maps here.
      address: '127.0.0.1',
      port: KUBELET_PORT,
      readOnlyPort: 0,
      healthzPort: 0,
      // Only the apiserver (a client certificate from the cluster's CA) may call it.
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: false },
        x509: { clientCAFile: c.clientCaFile },
      },
      authorization: { mode: 'AlwaysAllow' },
      containerRuntimeEndpoint: `unix://${l.containerdSocket}`,
      cgroupDriver: 'cgroupfs',
      // These machines have the v1 (hybrid) hierarchies, which 1.35+ refuses unless told.
      failCgroupV1: false,
      failSwapOn: false,
      // Pods get no DNS server: none runs in the cluster, and the machine's would be an outside one.
      resolvConf: '',
      podLogsDir: l.podLogsDir,
      registerWithTaints: [REAL_NODE_TAINT],
      // A shared test machine's disk is not this node's to keep free: evict only when it is really full.
      evictionHard: {
        'memory.available': '100Mi',
        'nodefs.available': '1%',
        'imagefs.available': '1%',
        'nodefs.inodesFree': '1%',
      },
      imageGCHighThresholdPercent: 99,
      imageGCLowThresholdPercent: 98,
      serializeImagePulls: false,
      // Node status every 10 s, as kubeadm's nodes do.
      nodeStatusReportFrequency: '10s',
      shutdownGracePeriod: '0s',
    },
    null,
    2,
  )}\n`;
}

export interface KubeletArgsInput {
  readonly nodeIp: string;
}

export function kubeletArgs(l: NodeLayout, c: KubeletArgsInput): string[] {
  return [
    `--config=${l.kubeletConfig}`,
    `--kubeconfig=${l.kubeletKubeconfig}`,
    `--root-dir=${l.kubeletRoot}`,
    `--cert-dir=${join(l.kubeletRoot, 'pki')}`,
    `--node-ip=${c.nodeIp}`,
    `--node-labels=${REAL_NODE_LABEL}=true`,
    '--v=1',
  ];
}

/**
 * The kubelet's wrapper, run with `unshare -m --propagation unchanged`: in that private mount namespace it
 * bind-mounts the sysctl files (KUBELET_SYSCTLS) and execs the kubelet. /proc is private on these machines,
 * so the bind mounts stay in that namespace; the kubelet's root dir is a shared mount (node.ts), so the
 * volumes it mounts there reach containerd in the host's.
 */
export function kubeletWrapper(l: NodeLayout): string {
  const binds = Object.keys(KUBELET_SYSCTLS).map(
    (key) => `mount --bind ${JSON.stringify(sysctlFile(l, key))} /proc/sys/${key}`,
  );
  return ['set -e', 'mount --make-rprivate /proc', ...binds, 'exec "$@"'].join('\n');
}

/**
 * kube-proxy in the node namespace (iptables mode, Debian's iptables): only that namespace's tables change.
 * Its conntrack settings are left alone (0 = keep), since some are global to the machine.
 */
export function kubeProxyConfig(l: NodeLayout, nodeName: string): string {
  return `${JSON.stringify(
    {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: l.kubeProxyKubeconfig },
      hostnameOverride: nodeName,
      mode: 'iptables',
      clusterCIDR: NODE_POD_CIDR,
      bindAddress: NODE_NS_ADDRESS,
      healthzBindAddress: '127.0.0.1:10256',
      metricsBindAddress: '127.0.0.1:10249',
      conntrack: {
        maxPerCore: 0,
        min: 0,
        tcpEstablishedTimeout: '0s',
        tcpCloseWaitTimeout: '0s',
        udpTimeout: '0s',
        udpStreamTimeout: '0s',
      },
    },
    null,
    2,
  )}\n`;
}
