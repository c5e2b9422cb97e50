/**
 * Debian's podman, driven the way it works on a machine without Docker and without a systemd cgroup
 * manager: the flags here are the ones measured to work (see docs/container-image.md).
 */
import { join } from 'node:path';
import { ensureDebianPackages } from '../host/apt.js';
import { capture, type CaptureResult } from '../host/exec.js';
import { cacheRoot } from '../host/paths.js';

/**
 * podman and buildah build and run the image; debootstrap makes the base images; binutils' strip slims the model
 * servers' shared objects (dev/models/python-image-tree.ts).
 */
export const IMAGE_PACKAGES = ['podman', 'buildah', 'runc', 'fuse-overlayfs', 'debootstrap', 'binutils'] as const;

/**
 * Global flags for every podman call that runs a container: crun refuses the hybrid cgroups of these
 * machines, runc with cgroupfs does not.
 */
export const PODMAN_RUNTIME_FLAGS = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs'] as const;

/**
 * podman's default limits exceed the session's hard limits, and raising them needs CAP_SYS_RESOURCE;
 * a container gets explicit ones no higher than the session's own.
 */
export const PODMAN_ULIMITS = ['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096:4096'] as const;

export function imageLogDir(): string {
  return join(cacheRoot(), 'logs');
}

export async function ensurePodman(log: (line: string) => void, logFile: string): Promise<void> {
  await ensureDebianPackages(IMAGE_PACKAGES, log, logFile);
}

export function podman(args: readonly string[]): Promise<CaptureResult> {
  return capture('podman', [...PODMAN_RUNTIME_FLAGS, ...args]);
}

/** Runs podman and returns its trimmed stdout, or throws with its stderr. */
export async function podmanOk(args: readonly string[]): Promise<string> {
  const r = await podman(args);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return r.stdout.trim();
}

export async function imageExists(name: string): Promise<boolean> {
  return (await podman(['image', 'exists', name])).code === 0;
}

/** The image's size in bytes, as `podman images` reports it (all layers, uncompressed). */
export async function imageSize(name: string): Promise<number> {
  return Number(await podmanOk(['image', 'inspect', '--format', '{{.Size}}', name]));
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
