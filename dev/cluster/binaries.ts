/**
 * The releases the local cluster runs, and where their binaries come from: each is built from a committed
 * wrapper module under tools/ (see tools/README.md) by go-build.ts and cached outside the repository.
 *
 * 1.37 is what `npm start` and `npm test` run; 1.35, the oldest minor still supported upstream, is what the
 * compatibility run (`npm run test:compat`, EO_KUBE_RELEASE=1.35) runs.
 */
import { ControlPlaneError } from '../host/errors.js';
import { ensureGoBuild, type GoModuleBuild } from './go-build.js';
import { allSettledOrThrow } from '../host/all-settled.js';

export interface KubernetesRelease {
  /** The minor, as EO_KUBE_RELEASE names it. */
  readonly minor: string;
  /** The exact release, as `kubectl version` and `/version` report it. */
  readonly version: string;
  readonly kubernetes: GoModuleBuild;
  readonly etcd: GoModuleBuild;
}

/** Without these the binaries report v0.0.0-master: Kubernetes' own build sets them from git (hack/lib/version.sh). */
function versionLdflags(version: string): string[] {
  const [major = '', minor = ''] = version.slice(1).split('.');
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]);
}

/** The real node's programs (node.ts), built from the same module where its go.mod lists them. */
const NODE_BINARIES = ['kubelet', 'kube-proxy'];

function release(version: string, etcdVersion: string, opts: { readonly nodeBinaries: boolean }): KubernetesRelease {
  const minor = version.slice(1).split('.').slice(0, 2).join('.');
  const etcdMinor = etcdVersion.slice(1).split('.').slice(0, 2).join('.');
  return {
    minor,
    version,
    kubernetes: {
      module: `kubernetes-${minor}`,
      version,
      binaries: [
        'kube-apiserver',
        'kube-controller-manager',
        'kube-scheduler',
        'kubectl',
        ...(opts.nodeBinaries ? NODE_BINARIES : []),
      ],
      ldflags: versionLdflags(version),
      versionCheck: { args: (b) => (b === 'kubectl' ? ['version', '--client'] : ['--version']), expect: version },
    },
    etcd: {
      module: `etcd-${etcdMinor}`,
      version: etcdVersion,
      binaries: ['etcd'],
      renames: { server: 'etcd' },
      versionCheck: { args: () => ['--version'], expect: `etcd Version: ${etcdVersion.slice(1)}` },
    },
  };
}

/** Every release the project is tested on, newest first. The versions must match tools/<module>/go.mod. */
export const RELEASES: readonly KubernetesRelease[] = [
  release('v1.37.2', 'v3.7.3', { nodeBinaries: true }),
  release('v1.35.4', 'v3.6.16', { nodeBinaries: false }),
];

export const KWOK: GoModuleBuild = {
  module: 'kwok',
  version: 'v0.8.0',
  binaries: ['kwok'],
  versionCheck: { args: () => ['--version'], expect: 'kwok version v0.8.0' },
};

/** The release EO_KUBE_RELEASE names (a minor such as 1.35), by default the newest. */
export function selectedRelease(env: NodeJS.ProcessEnv = process.env): KubernetesRelease {
  const wanted = env['EO_KUBE_RELEASE'];
  if (wanted === undefined || wanted === '') return RELEASES[0] as KubernetesRelease;
  const found = RELEASES.find((r) => r.minor === wanted || r.version === wanted || r.version === `v${wanted}`);
  if (found === undefined)
    throw new ControlPlaneError(
      `EO_KUBE_RELEASE=${wanted}: not a release this project builds (${RELEASES.map((r) => r.minor).join(', ')})`,
    );
  return found;
}

export interface ClusterBinaries {
  readonly release: KubernetesRelease;
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubectl: string;
  readonly kwok: string;
  /** The real node's kubelet and kube-proxy, where the release's module builds them (1.37). */
  readonly kubelet?: string;
  readonly kubeProxy?: string;
}

/** The paths of the release's binaries, built first where the cache has no verified copy (minutes, once). */
export async function ensureClusterBinaries(
  rel: KubernetesRelease = selectedRelease(),
  log: (line: string) => void = () => {},
): Promise<ClusterBinaries> {
  // Concurrent: each build has link and download phases that leave the other cores idle. All are awaited,
  // so a failed one never leaves another running into a process that is about to exit.
  const [etcd, kwok, kube] = await allSettledOrThrow([
    ensureGoBuild(rel.etcd, log),
    ensureGoBuild(KWOK, log),
    ensureGoBuild(rel.kubernetes, log),
  ]);
  const path = (paths: Record<string, string>, name: string): string => {
    const p = paths[name];
    if (p === undefined) throw new ControlPlaneError(`no ${name} among the built binaries`);
    return p;
  };
  return {
    release: rel,
    etcd: path(etcd, 'etcd'),
    kubeApiserver: path(kube, 'kube-apiserver'),
    kubeControllerManager: path(kube, 'kube-controller-manager'),
    kubeScheduler: path(kube, 'kube-scheduler'),
    kubectl: path(kube, 'kubectl'),
    kwok: path(kwok, 'kwok'),
    ...(kube['kubelet'] !== undefined && kube['kube-proxy'] !== undefined
      ? { kubelet: kube['kubelet'], kubeProxy: kube['kube-proxy'] }
      : {}),
  };
}
