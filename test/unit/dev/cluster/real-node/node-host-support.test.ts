import { describe, expect, it } from 'vitest';
import {
  realNodeBlocker,
  writableCgroups,
  type NodeHostFacts,
} from '../../../../../dev/cluster/real-node/node-host-support.js';

/** This kind of machine: root with every capability but CAP_SYS_RESOURCE, cgroup v1 per controller, overlayfs. */
const V1_MOUNTS = [
  'tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0',
  ...['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids'].map(
    (c) => `cgroup /sys/fs/cgroup/${c} cgroup rw,relatime,${c} 0 0`,
  ),
].join('\n');
const FIT: NodeHostFacts = {
  uid: 0,
  capEff: '000001fffeffffff',
  mounts: V1_MOUNTS,
  filesystems: 'nodev\tsysfs\nnodev\tcgroup\nnodev\toverlay\n',
};

describe('whether the machine can run the real node', () => {
  it('accepts root with its capabilities, writable cgroups (v1 or v2) and overlayfs', () => {
    expect(realNodeBlocker(FIT)).toBeUndefined();
    expect(
      realNodeBlocker({ ...FIT, mounts: 'cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0' }),
    ).toBeUndefined();
  });

  it('names the first cause a user fixes: not root, then capabilities, cgroups, overlayfs', () => {
    expect(realNodeBlocker({ ...FIT, uid: 1000 })).toBe('not root (uid 1000)');
    // docker run without --privileged: root without CAP_SYS_ADMIN (bit 21) and CAP_NET_ADMIN (bit 12).
    expect(realNodeBlocker({ ...FIT, capEff: '00000000a80425fb' })).toBe(
      'root here lacks CAP_NET_ADMIN and CAP_SYS_ADMIN (an unprivileged container?)',
    );
    expect(realNodeBlocker({ ...FIT, mounts: '' })).toBe('no writable cgroup hierarchy is mounted');
    expect(realNodeBlocker({ ...FIT, mounts: V1_MOUNTS.replace(/rw,relatime,memory/, 'ro,relatime,memory') })).toBe(
      'no writable memory cgroup',
    );
    expect(realNodeBlocker({ ...FIT, mounts: V1_MOUNTS.replace(/rw/g, 'ro') })).toBe(
      'no writable cgroup hierarchy is mounted',
    );
    expect(realNodeBlocker({ ...FIT, filesystems: 'nodev\tsysfs\n' })).toMatch(/^the kernel has no overlayfs/);
  });

  it('reads a read-only cgroup2 mount as none, and v1 controllers by their mount options', () => {
    expect(writableCgroups('cgroup2 /sys/fs/cgroup cgroup2 ro,nosuid 0 0').v2).toBe(false);
    const v1 = writableCgroups('cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0').v1;
    expect([...v1].filter((c) => c.startsWith('cpu'))).toEqual(['cpu', 'cpuacct']);
  });
});
