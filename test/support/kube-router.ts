/**
 * A NetworkPolicy engine for simulated pods: kube-router's network policy controller (tools/kube-router, alone:
 * no routing, no service proxy) in a network namespace of its own, standing for one kwok Node. Each pod the test
 * names gets a namespace with its cluster address, on a bridge in the node's namespace, so a call between them is
 * bridged traffic that kube-router's iptables rules and ipsets judge, as on a node with a bridge CNI.
 *
 * Nothing on the host changes: the namespaces hold every link, rule and set (br_netfilter's sysctls are per
 * namespace, and 1 in a new one); kube-router reaches the apiserver through a Unix socket this process serves
 * (the namespace's 127.0.0.1 is not the host's). stop() kills the processes and deletes the namespaces; what a
 * killed run left (its pid is in the names) is removed by the next start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { ensureDebianPackages } from '../../dev/host/apt.js';
import { capture } from '../../dev/host/exec.js';
import { pidAlive } from '../../dev/host/file-lock.js';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';

/** The release tools/kube-router/go.mod requires. */
export const KUBE_ROUTER: GoModuleBuild = { module: 'kube-router', version: 'v2.1.0', binaries: ['kube-router'] };

/** The cluster IPs (dev/cluster/network.ts), which kube-router lets through. */
const SERVICE_RANGE = '198.19.0.0/20';
/** The node's bridge: in the kwok pods' 198.18.0.0/16, outside every kwok Node's /24. */
const BRIDGE_ADDRESS = '198.18.255.254/16';
const APISERVER_PORT_IN_NODE = 6443;

export interface SimulatedPod {
  readonly name: string;
  readonly ip: string;
}

export interface PolicyNode {
  /** An HTTP server answering 200 in `pod`'s namespace. */
  serve(pod: string, port: number): Promise<void>;
  /** A call from `pod`'s namespace: the HTTP status, or the connection error's code (ECONNREFUSED when rejected). */
  call(pod: string, ip: string, port: number): Promise<string>;
  stop(): Promise<void>;
}

async function must(cmd: string, args: readonly string[]): Promise<string> {
  const r = await capture(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

const NAMESPACE_PREFIX = 'eo-np-';

/** Ends the processes in, and deletes, the namespaces and files of runs whose process is gone. */
async function removeLeftovers(): Promise<void> {
  const deadOwner = (name: string): boolean => {
    const pid = Number(name.slice(NAMESPACE_PREFIX.length).split('-')[0]);
    return Number.isInteger(pid) && pid > 0 && !pidAlive(pid);
  };
  const namespaces = (await capture('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0] ?? '');
  for (const ns of namespaces.filter((n) => n.startsWith(NAMESPACE_PREFIX) && deadOwner(n))) {
    const pids = (await capture('ip', ['netns', 'pids', ns])).stdout.split('\n').filter(Boolean);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Ended between the listing and now.
      }
    }
    await capture('ip', ['netns', 'del', ns]);
  }
  for (const entry of await readdir(tmpdir()))
    if (entry.startsWith(NAMESPACE_PREFIX) && deadOwner(entry))
      await rm(join(tmpdir(), entry), { recursive: true, force: true });
}

/**
 * Starts kube-router for the kwok Node `nodeName` (whose pods it guards), with `pods` wired to its bridge; the
 * admin kubeconfig's credentials are used. Builds kube-router (Go module proxy) and installs ipset (Debian) first.
 */
export async function startPolicyNode(
  kubeconfigPath: string,
  nodeName: string,
  pods: readonly SimulatedPod[],
): Promise<PolicyNode> {
  const logFile = join(tmpdir(), 'eo-kube-router-setup.log');
  await ensureDebianPackages(['ipset'], () => {}, logFile);
  const binary = (await ensureGoBuild(KUBE_ROUTER))['kube-router'] ?? 'kube-router';

  await removeLeftovers();
  const id = randomBytes(4).toString('hex');
  const nodeNs = `${NAMESPACE_PREFIX}${process.pid}-${id}`;
  const podNs = new Map(pods.map((p, i) => [p.name, `${nodeNs}-${i}`]));
  // The socket, kube-router's kubeconfig and its log; removed by stop().
  const dir = await mkdtemp(join(tmpdir(), `${nodeNs}-`));
  const socket = join(dir, 'apiserver.sock');
  const processes: ChildProcess[] = [];
  let relay: Server | undefined;
  const inNode = (args: readonly string[]): Promise<string> => must('ip', ['netns', 'exec', nodeNs, ...args]);
  const stop = async (): Promise<void> => {
    for (const p of processes) p.kill('SIGKILL');
    relay?.close();
    for (const ns of [...podNs.values(), nodeNs]) await capture('ip', ['netns', 'del', ns]);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await must('ip', ['netns', 'add', nodeNs]);
    await inNode(['ip', 'link', 'set', 'lo', 'up']);
    await inNode(['ip', 'link', 'add', 'eonp0', 'type', 'bridge']);
    await inNode(['ip', 'addr', 'add', BRIDGE_ADDRESS, 'dev', 'eonp0']);
    await inNode(['ip', 'link', 'set', 'eonp0', 'up']);
    let i = 0;
    for (const pod of pods) {
      const ns = podNs.get(pod.name) ?? '';
      const link = `np${id}${i++}`;
      await must('ip', ['netns', 'add', ns]);
      // Made inside the node's namespace, the pair never appears on the host.
      await inNode(['ip', 'link', 'add', link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      await inNode(['ip', 'link', 'set', link, 'master', 'eonp0', 'up']);
      for (const args of [
        ['addr', 'add', `${pod.ip}/16`, 'dev', 'eth0'],
        ['link', 'set', 'eth0', 'up'],
        ['link', 'set', 'lo', 'up'],
      ])
        await must('ip', ['netns', 'exec', ns, 'ip', ...args]);
    }

    // The apiserver, for kube-router in the node's namespace: its 127.0.0.1:6443 → this Unix socket → the apiserver.
    const config = yaml.load(readFileSync(kubeconfigPath, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    const server = new URL(config.clusters[0]?.cluster.server ?? '');
    relay = createServer((c) => {
      const upstream = createConnection(Number(server.port), server.hostname);
      c.pipe(upstream).pipe(c);
      c.on('error', () => upstream.destroy());
      upstream.on('error', () => c.destroy());
    }).listen(socket);
    const bridge = `const net=require('net');net.createServer(c=>{const u=net.connect(${JSON.stringify(socket)});c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())}).listen(${APISERVER_PORT_IN_NODE},'127.0.0.1')`;
    processes.push(spawn('ip', ['netns', 'exec', nodeNs, process.execPath, '-e', bridge], { stdio: 'ignore' }));
    for (const c of config.clusters) c.cluster.server = `https://127.0.0.1:${APISERVER_PORT_IN_NODE}`;
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, yaml.dump(config), { mode: 0o600 });

    const log = join(dir, 'kube-router.log');
    const args = [
      `--kubeconfig=${kubeconfig}`,
      '--run-firewall=true',
      '--run-router=false',
      '--run-service-proxy=false',
      `--hostname-override=${nodeName}`,
      `--service-cluster-ip-range=${SERVICE_RANGE}`,
      '--health-port=0',
      '--metrics-port=0',
    ];
    const router = spawn('sh', ['-c', `exec ip netns exec ${nodeNs} ${binary} ${args.join(' ')} >${log} 2>&1`], {
      stdio: 'ignore',
    });
    processes.push(router);
  } catch (err) {
    await stop();
    throw err;
  }

  const nsOf = (pod: string): string => {
    const ns = podNs.get(pod);
    if (ns === undefined) throw new Error(`no simulated pod ${pod}`);
    return ns;
  };
  return {
    serve: async (pod, port) => {
      const ip = pods.find((p) => p.name === pod)?.ip ?? '';
      const script = `require('http').createServer((q,s)=>s.end('ok')).listen(${port},${JSON.stringify(ip)})`;
      processes.push(spawn('ip', ['netns', 'exec', nsOf(pod), process.execPath, '-e', script], { stdio: 'ignore' }));
      await new Promise((r) => setTimeout(r, 500));
    },
    call: async (pod, ip, port) => {
      const script = `fetch('http://${ip}:${port}/',{signal:AbortSignal.timeout(3000)}).then(r=>console.log(r.status),e=>console.log(e.cause?.code??e.name))`;
      const r = await capture('ip', ['netns', 'exec', nsOf(pod), process.execPath, '-e', script]);
      return r.stdout.trim();
    },
    stop,
  };
}
