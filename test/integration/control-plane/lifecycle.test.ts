/**
 * A second control plane next to the run's one: proves two coexist (free ports, own data dirs, own model
 * hosts), that a port taken before etcd binds it is retried on others, that extra token users are
 * authenticated but get only what RBAC grants them, that kube-apiserver alone can be restarted (fault tests)
 * and that stop() leaves nothing behind: no process, no data dir, no network namespace or veth pair.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane } from '../../../dev/cluster/index.js';
import type { ControlPlane } from '../../../dev/cluster/index.js';
import { pidAlive } from '../../../dev/host/file-lock.js';
import { distinctFreePorts } from '../../../dev/cluster/ports.js';
import { testCluster } from '../../support/cluster.js';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** Pids whose command line mentions `needle` (our data dir is in every flag list). */
async function pidsMentioning(needle: string): Promise<number[]> {
  const r = await run('pgrep', ['-f', needle]);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

describe('a second control plane', () => {
  let plane: ControlPlane | undefined;
  afterAll(async () => {
    await plane?.stop();
  });

  it("starts beside the run's one on other ports after the first ones turn out taken, authenticates extra token users and applies RBAC to them", async () => {
    // The first ports handed out are taken by the time etcd binds them (another process won the race).
    const [taken = 0] = await distinctFreePorts(1);
    const squatter = createServer().listen(taken, '127.0.0.1');
    await new Promise((resolve) => squatter.once('listening', resolve));
    let handedOut = 0;
    const logged: string[] = [];
    try {
      plane = await startControlPlane({
        extraTokens: [{ token: 'viewer-token-123', user: 'viewer', uid: 'viewer-1', groups: ['eo:viewers'] }],
        ports: async (count) =>
          handedOut++ === 0 ? [taken, ...(await distinctFreePorts(count - 1))] : distinctFreePorts(count),
        log: (line) => logged.push(line),
      });
    } finally {
      squatter.close();
    }
    expect(handedOut).toBeGreaterThanOrEqual(2);
    expect(logged.filter((l) => l.startsWith('starting etcd'))).toHaveLength(handedOut);
    expect(plane.etcdEndpoint).not.toContain(`:${taken}`);
    expect(plane.server).not.toBe(testCluster().server);
    expect(plane.etcdEndpoint).not.toBe(testCluster().etcdEndpoint);
    expect(plane.modelHost.netns).not.toBe(testCluster().modelHost.netns);
    expect(plane.modelHost.address).not.toBe(testCluster().modelHost.address);
    const { kubectl } = testCluster();

    const admin = await run(kubectl, ['--kubeconfig', plane.kubeconfigPath, 'get', 'ns', 'default', '-o', 'name']);
    expect(admin.code, admin.stderr).toBe(0);
    expect(admin.stdout.trim()).toBe('namespace/default');

    const viewer = await run(kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      '--token',
      'viewer-token-123',
      'get',
      'ns',
    ]);
    expect(viewer.code).not.toBe(0);
    expect(viewer.stderr).toMatch(/User "viewer" cannot list resource "namespaces"/);

    const role = await run(kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'create',
      'clusterrole',
      'configmap-reader',
      '--verb=get,list',
      '--resource=configmaps',
    ]);
    expect(role.code, role.stderr).toBe(0);
    const grant = await run(kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'create',
      'clusterrolebinding',
      'viewers-read',
      '--clusterrole=configmap-reader',
      '--group=eo:viewers',
    ]);
    expect(grant.code, grant.stderr).toBe(0);
    const allowed = await run(kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      '--token',
      'viewer-token-123',
      'get',
      'configmaps',
      '-n',
      'default',
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it('restarts only kube-apiserver, on the same address, with etcd and its data kept', async () => {
    if (plane === undefined) throw new Error('the first test did not start a control plane');
    const { kubectl } = testCluster();
    const onPlane = (args: string[]): ReturnType<typeof run> =>
      run(kubectl, ['--kubeconfig', plane?.kubeconfigPath ?? '', '--request-timeout=5s', ...args]);
    const created = await onPlane(['create', 'configmap', 'survivor', '-n', 'default', '--from-literal=kept=yes']);
    expect(created.code, created.stderr).toBe(0);
    const apiserverPids = async (): Promise<number[]> =>
      await pidsMentioning(`secure-port=${new URL(plane?.server ?? '').port}`);
    const before = await apiserverPids();
    expect(before).toHaveLength(1);

    await plane.stopApiserver();
    expect(await apiserverPids()).toEqual([]);
    const down = await onPlane(['get', 'configmap', 'survivor', '-n', 'default']);
    expect(down.code).not.toBe(0);
    expect(down.stderr).toMatch(/connection to the server .* was refused/);
    const etcdHealth = await fetch(`${plane.etcdEndpoint}/health`);
    expect(await etcdHealth.text()).toMatch(/"health":\s*"true"/);
    await plane.stopApiserver(); // a no-op when already stopped

    await plane.startApiserver();
    const after = await apiserverPids();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);
    const kept = await onPlane(['get', 'configmap', 'survivor', '-n', 'default', '-o', 'jsonpath={.data.kept}']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).toBe('yes');
    await expect(plane.startApiserver()).rejects.toThrow(/already running/);
  });

  it('stop() ends every component, removes the temporary data dir and the model host', async () => {
    if (plane === undefined) throw new Error('the previous test did not start a control plane');
    const pids = await pidsMentioning(plane.dataDir);
    // etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (and their watchdogs)
    expect(pids.length).toBeGreaterThanOrEqual(5);
    expect((await run('ip', ['netns', 'list'])).stdout).toContain(plane.modelHost.netns);
    await plane.stop();
    for (const pid of pids) expect(pidAlive(pid), `pid ${pid} still alive`).toBe(false);
    expect(await stat(plane.dataDir).catch(() => undefined)).toBeUndefined();
    expect((await run('ip', ['netns', 'list'])).stdout).not.toContain(plane.modelHost.netns);
    expect((await run('ip', ['link', 'show', plane.modelHost.hostLink])).code).not.toBe(0);
    // The run's cluster still runs: the unreachable route for simulated pods stays while it does.
    expect((await run('ip', ['route', 'show', '198.18.0.0/15'])).stdout).toContain('unreachable');
    await plane.stop(); // idempotent
    await plane.stopApiserver(); // nothing left to stop
    await expect(plane.startApiserver()).rejects.toThrow(/was stopped/);
    expect(await pidsMentioning(plane.dataDir)).toEqual([]);
  });
});
