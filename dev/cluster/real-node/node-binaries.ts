/**
 * The real node's own programs besides the kubelet and kube-proxy (binaries.ts): containerd with its runc
 * shim and ctr, and the local registry it pulls images from. Each is built from a wrapper module under
 * tools/ by go-build.ts and cached outside the repository.
 */
import { ControlPlaneError } from '../../host/errors.js';
import { ensureGoBuild, type GoModuleBuild } from '../go-build.js';
import { allSettledOrThrow } from '../../host/all-settled.js';

export const CONTAINERD: GoModuleBuild = {
  module: 'containerd',
  version: 'v2.4.2',
  binaries: ['containerd', 'containerd-shim-runc-v2', 'ctr'],
  // btrfs, devmapper and zfs need cgo; the node uses the overlayfs snapshotter.
  tags: ['no_btrfs', 'no_devmapper', 'no_zfs'],
  ldflags: ['-X github.com/containerd/containerd/v2/version.Version=v2.4.2'],
  versionCheck: { args: (b) => (b === 'containerd-shim-runc-v2' ? ['-v'] : ['--version']), expect: 'v2.4.2' },
};

export const REGISTRY: GoModuleBuild = {
  module: 'registry',
  version: 'v3.1.2',
  binaries: ['registry'],
  ldflags: ['-X github.com/distribution/distribution/v3/version.version=v3.1.2'],
  versionCheck: { args: () => ['--version'], expect: 'v3.1.2' },
};

export interface NodeBinaries {
  readonly containerd: string;
  readonly shim: string;
  readonly ctr: string;
  readonly registry: string;
}

/** Builds what the cache lacks (containerd ≈ 80 s on 2 cores, once) and returns the paths. */
export async function ensureNodeBinaries(log: (line: string) => void = () => {}): Promise<NodeBinaries> {
  const [containerd, registry] = await allSettledOrThrow([
    ensureGoBuild(CONTAINERD, log),
    ensureGoBuild(REGISTRY, log),
  ]);
  const path = (paths: Record<string, string>, name: string): string => {
    const p = paths[name];
    if (p === undefined) throw new ControlPlaneError(`no ${name} among the built binaries`);
    return p;
  };
  return {
    containerd: path(containerd, 'containerd'),
    shim: path(containerd, 'containerd-shim-runc-v2'),
    ctr: path(containerd, 'ctr'),
    registry: path(registry, 'registry'),
  };
}
