import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { nodeCleanupScript } from '../../../../../dev/cluster/real-node/node-cleanup.js';
import {
  cniConfList,
  containerdConfig,
  kubeletArgs,
  kubeletConfig,
  kubeletWrapper,
  nodeLayout,
  PAUSE_IMAGE,
  REAL_NODE_LABEL,
  registryHostsToml,
  REGISTRY_HOST,
} from '../../../../../dev/cluster/real-node/node-config.js';
import { NODE_POD_CIDR } from '../../../../../dev/cluster/real-node/node-network.js';
import { podCidr, nodeAddress } from '../../../../../dev/cluster/network.js';

const l = nodeLayout(
  '/root/.cache/endpoint-operator/real-node/root',
  '/root/.cache/endpoint-operator/real-node-images',
);

describe('the real node configuration', () => {
  it('keeps containerd inside the node root but its image store, with the settings this machine kind needs', () => {
    const toml = containerdConfig(l);
    for (const line of [
      'restrict_oom_score_adj = true',
      'SystemdCgroup = false',
      'netns_mounts_under_state_dir = true',
      `sandbox = "${PAUSE_IMAGE}"`,
      'disable = true',
    ])
      expect(toml).toContain(line);
    // Every absolute path it names is under the node root, but the kept image store and Debian's runc and plugins.
    expect(toml).toContain(`root = "${l.containerdRoot}"`);
    expect(l.containerdRoot.startsWith(`${l.root}/`)).toBe(false);
    const paths = [...toml.matchAll(/"(\/[^"]*)"/g)].map((m) => m[1] ?? '');
    expect(paths.length).toBeGreaterThan(5);
    for (const p of paths)
      expect(p.startsWith(`${l.root}/`) || [l.containerdRoot, '/usr/sbin/runc', '/usr/lib/cni'].includes(p)).toBe(true);
  });

  it('pulls from the local registry over plain HTTP', () => {
    const hosts = registryHostsToml();
    expect(hosts.dir).toBe(REGISTRY_HOST);
    expect(hosts.text).toContain(`server = "http://${REGISTRY_HOST}"`);
    expect(PAUSE_IMAGE.startsWith(`${REGISTRY_HOST}/`)).toBe(true);
  });

  it("gives pods addresses from the node's range, apart from every kwok Node's", () => {
    const conf = JSON.parse(cniConfList(l)) as { plugins: { ipam: { ranges: { subnet: string }[][] } }[] };
    expect(conf.plugins[0]?.ipam.ranges[0]?.[0]?.subnet).toBe(NODE_POD_CIDR);
    for (let i = 0; i < 256; i++) {
      expect(podCidr(i).startsWith('198.19.128.')).toBe(false);
      expect(nodeAddress(i).startsWith('198.19.128.')).toBe(false);
    }
  });

  it('runs the kubelet on loopback, tainted, with cgroupfs and no DNS of the machine', () => {
    const c = JSON.parse(kubeletConfig(l, { clientCaFile: '/x/ca.crt' })) as Record<string, unknown>;
    expect(c).toMatchObject({
      address: '127.0.0.1',
      readOnlyPort: 0,
      cgroupDriver: 'cgroupfs',
      failCgroupV1: false,
      resolvConf: '',
      authentication: { anonymous: { enabled: false }, x509: { clientCAFile: '/x/ca.crt' } },
      registerWithTaints: [{ key: REAL_NODE_LABEL, effect: 'NoSchedule' }],
    });
    const args = kubeletArgs(l, { nodeIp: '198.19.254.1' });
    expect(args).toContain(`--root-dir=${l.kubeletRoot}`);
    // The machine's own name: another would be resolved by an outside DNS server.
    expect(args.some((a) => a.startsWith('--hostname-override'))).toBe(false);
  });

  it("bind-mounts the kubelet's sysctls and execs it", () => {
    const script = kubeletWrapper(l);
    expect(script).toContain('/proc/sys/vm/overcommit_memory');
    expect(script).toContain('/proc/sys/kernel/panic_on_oops');
    expect(script.trimEnd().endsWith('exec "$@"')).toBe(true);
    expect(spawnSync('bash', ['-n', '-c', script]).status).toBe(0);
  });

  it('writes a clean-up script bash accepts, removing only what the node made and keeping its image store', () => {
    const script = nodeCleanupScript({
      root: l.root,
      imageStore: l.containerdRoot,
      shim: '/c/containerd-shim-runc-v2',
      daemons: ['/k/kubelet', "/odd path/it's"],
      createdHostPaths: ['/var/lib/kubelet'],
    });
    expect(spawnSync('bash', ['-n', '-c', script]).status).toBe(0);
    expect(script).toContain("'/odd path/it'\\''s'");
    expect(script).toContain('rm -rf --one-file-system');
    expect(script).not.toContain('/var/log/containers');
    // Mounts below the image store are undone, the store itself is not removed.
    const removeLine = script.split('\n').find((line) => line.includes('rm -rf')) ?? '';
    expect(removeLine).not.toContain(l.containerdRoot);
    expect(script).toMatch(new RegExp(`for r in .*'${l.containerdRoot}'`));
  });

  it("finds the node's processes by their executable in one pass over /proc", () => {
    const sleeper = spawn('/bin/sleep', ['30']);
    try {
      const script = nodeCleanupScript({
        root: '/nonexistent/root',
        imageStore: '/nonexistent/images',
        shim: '/nonexistent/shim',
        daemons: [],
        createdHostPaths: [],
      });
      const pidsOf = /^pids_of\(\) \{\n[\s\S]*?\n\}$/m.exec(script)?.[0] ?? '';
      const run = (exe: string): string[] =>
        spawnSync('bash', ['-c', `${pidsOf}\npids_of "$@"`, 'pids_of', exe, '/nonexistent/other'], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter((l) => l !== '');
      // /bin/sleep may be a link: the kernel names its target.
      const exe = spawnSync('readlink', ['-f', '/bin/sleep'], { encoding: 'utf8' }).stdout.trim();
      expect(run(exe)).toContain(String(sleeper.pid));
      expect(run('/nonexistent/exe')).toEqual([]);
    } finally {
      sleeper.kill();
    }
  });
});
