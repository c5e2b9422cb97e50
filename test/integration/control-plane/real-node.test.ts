/**
 * The local cluster's real node (dev/cluster/real-node/node.ts), in a control plane of its own beside the run's: it
 * registers Ready, runs a pod from the local registry whose readiness the kubelet judges, serves logs and exec,
 * refuses a second cluster with a real node, and stops leaving nothing behind (processes, cgroups, mounts,
 * network namespace, link, route, files, the host's sysctls); a run whose owner was SIGKILLed together with
 * its watchdogs is cleaned up by the next start.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../../dev/cluster/index.js';
import { capture } from '../../../dev/host/exec.js';
import {
  FIXED_HOST_PATHS,
  KUBELET_SYSCTLS,
  ON_REAL_NODE,
  REAL_NODE_LABEL,
} from '../../../dev/cluster/real-node/node-config.js';
import { buildAndPush, HTTPD_BODY, HTTPD_IMAGE, HTTPD_PORT } from '../../../dev/cluster/real-node/node-images.js';
import { NODE_HOST_LINK, NODE_NETNS, NODE_POD_CIDR } from '../../../dev/cluster/real-node/node-network.js';
import { kubectl } from '../../support/cluster.js';
import { ONE_KWOK_NODE, startRealNodeCluster } from '../../support/real-node.js';

async function hostSysctls(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(KUBELET_SYSCTLS)) out[key] = (await readFile(`/proc/sys/${key}`, 'utf8')).trim();
  return out;
}

/** Executables of every process on the machine. */
async function executables(): Promise<string[]> {
  const out: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const exe = await readlink(`/proc/${pid}/exe`).catch(() => '');
    if (exe !== '') out.push(exe);
  }
  return out;
}

/** Everything a stopped node must not have left, as a list of findings (empty when clean). */
async function leftovers(root: string, createdHostPaths: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const node = ['/kubelet', '/kube-proxy', '/containerd', '/containerd-shim-runc-v2', '/registry'];
  for (const exe of await executables())
    if (exe.includes('/endpoint-operator/bin/') && node.some((n) => exe.endsWith(n))) found.push(`process ${exe}`);
  for (const hierarchy of await readdir('/sys/fs/cgroup'))
    for (const name of ['kubepods', 'k8s.io'])
      if (existsSync(join('/sys/fs/cgroup', hierarchy, name))) found.push(`cgroup ${hierarchy}/${name}`);
  for (const line of (await readFile('/proc/self/mountinfo', 'utf8')).split('\n')) {
    const point = line.split(' ')[4] ?? '';
    if (point.startsWith(root) || createdHostPaths.some((p) => point.startsWith(p))) found.push(`mount ${point}`);
  }
  if ((await capture('ip', ['netns', 'list'])).stdout.includes(NODE_NETNS)) found.push(`netns ${NODE_NETNS}`);
  if ((await capture('ip', ['link', 'show', NODE_HOST_LINK])).code === 0) found.push(`link ${NODE_HOST_LINK}`);
  if ((await capture('ip', ['route', 'show', NODE_POD_CIDR])).stdout.trim() !== '')
    found.push(`route ${NODE_POD_CIDR}`);
  for (const path of [root, ...createdHostPaths]) if (existsSync(path)) found.push(`file ${path}`);
  return found;
}

function podManifest(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      ...ON_REAL_NODE,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'httpd',
          image: HTTPD_IMAGE,
          ports: [{ containerPort: HTTPD_PORT }],
          readinessProbe: { httpGet: { path: '/', port: HTTPD_PORT }, periodSeconds: 1 },
        },
      ],
    },
  });
}

describe('a real node', () => {
  let plane: ControlPlane | undefined;
  const sysctlsBefore = hostSysctls();
  const createdHostPaths = FIXED_HOST_PATHS.filter((p) => !existsSync(p));
  afterAll(async () => {
    await plane?.stop();
  });

  it('registers Ready beside the kwok Nodes and runs a pod from the local registry, its readiness judged by the kubelet', async () => {
    const started = Date.now();
    // Waits its turn if another run holds the machine's one node (startRealNodeCluster), as the other files do.
    plane = await startRealNodeCluster('real node');
    console.error(`[real node] control plane and real node up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const node = plane.realNode;
    expect(node).toBeDefined();
    const k = (args: string[], input?: string): ReturnType<typeof kubectl> =>
      kubectl(args, { kubeconfig: plane?.kubeconfigPath ?? '', ...(input !== undefined ? { input } : {}) });

    const got = await k(['get', 'node', node?.name ?? '', '-o', 'json']);
    expect(got.code, got.stderr).toBe(0);
    const n = JSON.parse(got.stdout) as {
      metadata: { labels: Record<string, string> };
      spec: { taints?: { key: string }[] };
      status: {
        conditions: { type: string; status: string }[];
        nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
      };
    };
    expect(n.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(n.metadata.labels[REAL_NODE_LABEL]).toBe('true');
    expect(n.spec.taints?.map((t) => t.key)).toContain(REAL_NODE_LABEL);
    expect(n.status.nodeInfo.kubeletVersion).toBe(plane.version);
    expect(n.status.nodeInfo.containerRuntimeVersion).toBe('containerd://2.4.2');
    // The kwok Nodes stay.
    expect(plane.nodes).toHaveLength(1);

    // The controller-manager creates namespace default's ServiceAccount a moment after it starts; a pod
    // applied before it exists is refused (`serviceaccount "default" not found`).
    const account = await k(['wait', '--for=create', 'serviceaccount/default', '-n', 'default', '--timeout=60s']);
    expect(account.code, account.stderr).toBe(0);
    const applied = Date.now();
    const created = await k(['apply', '-f', '-'], podManifest('httpd'));
    expect(created.code, created.stderr).toBe(0);
    const ready = await k(['wait', '--for=condition=Ready', 'pod/httpd', '--timeout=120s']);
    expect(ready.code, ready.stderr + (await k(['describe', 'pod', 'httpd'])).stdout).toBe(0);
    console.error(`[real node] pod Ready ${((Date.now() - applied) / 1000).toFixed(1)} s after apply`);
    const pod = JSON.parse((await k(['get', 'pod', 'httpd', '-o', 'json'])).stdout) as {
      spec: { nodeName: string };
      status: { podIP: string };
    };
    expect(pod.spec.nodeName).toBe(node?.name);
    expect(pod.status.podIP).toMatch(/^198\.19\.128\.\d+$/);

    const answer = await fetch(`http://${pod.status.podIP}:${HTTPD_PORT}/`, { signal: AbortSignal.timeout(5_000) });
    expect(await answer.text()).toBe(HTTPD_BODY);
    const exec = await k(['exec', 'httpd', '--', '/bin/busybox', 'cat', '/www/index.html']);
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toBe(HTTPD_BODY);
    const logs = await k(['logs', 'httpd']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout + logs.stderr).toMatch(/response:200/);
  });

  it('reports the real reasons: ImagePullBackOff for an image the registry lacks, restarts with BackOff for a container that exits', async () => {
    const k = (args: string[], input?: string): ReturnType<typeof kubectl> =>
      kubectl(args, { kubeconfig: plane?.kubeconfigPath ?? '', ...(input !== undefined ? { input } : {}) });
    const pod = (name: string, image: string, command?: string[]): string =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          ...ON_REAL_NODE,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image, ...(command !== undefined ? { command } : {}) }],
        },
      });
    const missing = `${plane?.realNode?.registry ?? ''}/endpoint-operator/not-pushed:1`;
    expect((await k(['apply', '-f', '-'], pod('missing-image', missing))).code).toBe(0);
    expect((await k(['apply', '-f', '-'], pod('exits', HTTPD_IMAGE, ['/bin/busybox', 'false']))).code).toBe(0);
    const waiting = async (name: string): Promise<string> => {
      const r = await k(['get', 'pod', name, '-o', 'jsonpath={.status.containerStatuses[0].state.waiting.reason}']);
      return r.stdout.trim();
    };
    // Kubernetes 1.37's kubelet keeps a crashing container's state `terminated` while it backs off (no
    // `waiting.reason: CrashLoopBackOff`): what remains is the restart count and its BackOff events.
    const missingReasons = new Set<string>();
    let restarts = 0;
    const deadline = Date.now() + 110_000;
    while (Date.now() < deadline && !(missingReasons.has('ImagePullBackOff') && restarts >= 2)) {
      missingReasons.add(await waiting('missing-image'));
      const r = await k(['get', 'pod', 'exits', '-o', 'jsonpath={.status.containerStatuses[0].restartCount}']);
      restarts = Number(r.stdout.trim() || '0');
      await new Promise((r) => setTimeout(r, 500));
    }
    expect([...missingReasons]).toContain('ImagePullBackOff');
    expect(restarts).toBeGreaterThanOrEqual(2);
    const backOff = await k([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=exits,reason=BackOff',
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    expect(backOff.stdout).toMatch(/Back-off restarting failed container main/);
    const events = await k([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=missing-image',
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    // containerd's own words about the registry's answer.
    expect(events.stdout).toMatch(/not found/);
  });

  it('lets pods reach the apiserver as pods do: the kubernetes Service through kube-proxy, with their service account token', async () => {
    const k = (args: string[], input?: string): ReturnType<typeof kubectl> =>
      kubectl(args, { kubeconfig: plane?.kubeconfigPath ?? '', ...(input !== undefined ? { input } : {}) });
    // kubectl (static, as built for this cluster) in an image: its in-cluster configuration is what every
    // client library does (KUBERNETES_SERVICE_HOST, the projected token and CA).
    const image = `${plane?.realNode?.registry ?? ''}/endpoint-operator/kubectl:test`;
    await buildAndPush(
      image,
      'FROM scratch\nCOPY kubectl /kubectl\nENTRYPOINT ["/kubectl"]\n',
      {},
      join(plane?.dataDir ?? '', 'logs', 'kubectl-image.log'),
      { kubectl: plane?.kubectl ?? '' },
    );
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'api-client' },
      spec: {
        ...ON_REAL_NODE,
        restartPolicy: 'Never',
        containers: [{ name: 'main', image, args: ['get', '--raw', '/version'] }],
      },
    });
    expect((await k(['apply', '-f', '-'], manifest)).code).toBe(0);
    const done = await k(['wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/api-client', '--timeout=60s']);
    const logs = await k(['logs', 'api-client']);
    expect(done.code, `${done.stderr}\n${logs.stdout}${logs.stderr}`).toBe(0);
    expect(JSON.parse(logs.stdout)).toMatchObject({ gitVersion: plane?.version });
  });

  it('refuses a second cluster with a real node, saying why', async () => {
    await expect(startControlPlane({ realNode: true, nodes: ONE_KWOK_NODE })).rejects.toThrow(
      /a real node already runs on this machine/,
    );
  });

  it("stops leaving nothing behind, and the host's sysctls as they were", async () => {
    const root = plane?.realNode?.root ?? '';
    expect(await leftovers(root, createdHostPaths)).not.toEqual([]);
    await plane?.stop();
    plane = undefined;
    expect(await leftovers(root, createdHostPaths)).toEqual([]);
    expect(await hostSysctls()).toEqual(await sysctlsBefore);
  });

  it('cleans up after an owner SIGKILLed with its watchdogs, at the next start', async () => {
    const owner = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'real-node-owner.ts')],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: owner.stdout }).once('line', resolve);
      owner.once('exit', (code) => reject(new Error(`the owner exited (${String(code)}) before its node was Ready`)));
    });
    const { root } = JSON.parse(line) as { root: string };
    // Its watchdogs first (bash loops naming the owner's pid), so nothing cleans up but the next start.
    const watchdogs = await capture('pgrep', ['-f', `endpoint-operator-watchdog ${owner.pid}`]);
    for (const pid of watchdogs.stdout.split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL');
    owner.kill('SIGKILL');
    await new Promise((resolve) => owner.once('exit', resolve));
    expect(await leftovers(root, createdHostPaths)).not.toEqual([]);

    const logged: string[] = [];
    plane = await startControlPlane({ realNode: true, nodes: ONE_KWOK_NODE, log: (l) => logged.push(l) });
    // One line for everything the killed run left (staleRunsLine), naming its kubelet among them.
    const ended = logged.filter((l) =>
      l.startsWith(`ended what a killed run (pid ${String(owner.pid)}) left running: `),
    );
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatch(/\bkubelet [0-9]+\b/);
    await plane.stop();
    plane = undefined;
    expect(await leftovers(root, createdHostPaths)).toEqual([]);
  });
});
