/**
 * The CPU a pod on the real node has used, read from its pod-level cgroup as the kubelet (cgroupfs driver) made it:
 * `kubepods[/burstable|/besteffort]/pod<uid>`. Under cgroup v1 that is `cpuacct.usage` of the cpuacct hierarchy
 * (nanoseconds, user + system, every container of the pod including its pause container); under v2 `usage_usec` of
 * `cpu.stat`. The pause container sleeps, so the figure is the pod's workload's. The real node shares this
 * machine's kernel, so the files are read here directly.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const QOS_DIRS = ['', 'burstable', 'besteffort'] as const;
const V1_ROOT = '/sys/fs/cgroup/cpuacct/kubepods';
const V2_ROOT = '/sys/fs/cgroup/kubepods';

async function readOrUndefined(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** CPU seconds the pod with `uid` has used since it started; throws when no cgroup of that pod is found. */
export async function podCpuSeconds(uid: string): Promise<number> {
  for (const qos of QOS_DIRS) {
    const v1 = await readOrUndefined(join(V1_ROOT, qos, `pod${uid}`, 'cpuacct.usage'));
    if (v1 !== undefined) return Number(v1.trim()) / 1e9;
    const v2 = await readOrUndefined(join(V2_ROOT, qos, `pod${uid}`, 'cpu.stat'));
    const usec = v2?.match(/^usage_usec (\d+)$/m)?.[1];
    if (usec !== undefined) return Number(usec) / 1e6;
  }
  throw new Error(
    `no cgroup of pod ${uid} under ${V1_ROOT} or ${V2_ROOT} (is it running on this machine's real node?)`,
  );
}

/** The summed CPU seconds of several pods. */
export async function podsCpuSeconds(uids: readonly string[]): Promise<number> {
  const each = await Promise.all(uids.map(podCpuSeconds));
  return each.reduce((a, b) => a + b, 0);
}
