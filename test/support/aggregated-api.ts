/**
 * An aggregated API server run as a process on this machine for a test's own control plane, registered through the
 * kube-apiserver's aggregation layer as a cluster registers one: a Service in kube-system, its APIServices, and
 * whatever else it needs (RBAC). Without a real node the Service is an ExternalName of localhost: the aggregator dials
 * an ExternalName's host, which reaches the server on this machine's loopback. With one, the kube-apiserver routes
 * to a Service's endpoints (dev/cluster/flags.ts, routeToEndpoints), which may not be loopback: the server listens on
 * this machine's end of the node's link, and the Service has no selector and an Endpoints object naming that address
 * (kube-controller-manager mirrors it into an EndpointSlice), as a cluster registers an API served outside its pods.
 * Shared by custom-metrics-adapter.ts and metrics-server.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeLoopbackPort } from '../../dev/cluster/ports.js';
import { kubectl } from './cluster.js';
import { acceptsOnLoopback, running } from './local-process.js';

export interface AggregatedApiOptions {
  /** Names the server in messages ("the custom-metrics adapter"). */
  readonly what: string;
  readonly binary: string;
  /** The server's arguments, given the loopback port it must serve on and a directory for its certificates. */
  readonly args: (o: {
    readonly address: string;
    readonly securePort: number;
    readonly certDir: string;
  }) => readonly string[];
  /** Where it listens: 127.0.0.1 (an ExternalName Service), or a routable address of this machine (a Service with Endpoints). */
  readonly address?: string;
  readonly kubeconfig: string;
  /** The Service's name in kube-system. */
  readonly service: string;
  /** The API group and its versions, each with its APIService's versionPriority. */
  readonly group: string;
  readonly versions: readonly { readonly version: string; readonly priority: number }[];
  /** YAML documents applied with the registration (RBAC the server's clients need). */
  readonly extraObjects?: readonly string[];
  /** Other loopback ports the server is ready only once it listens on. */
  readonly alsoListensOn?: readonly number[];
}

const LOOPBACK = '127.0.0.1';

function registration(o: AggregatedApiOptions, securePort: number): string {
  const apiService = (v: { version: string; priority: number }): string => `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: { name: ${v.version}.${o.group} }
spec:
  group: ${o.group}
  version: ${v.version}
  service: { name: ${o.service}, namespace: kube-system, port: ${securePort} }
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: ${v.priority}
`;
  const meta = `metadata: { name: ${o.service}, namespace: kube-system }`;
  const service =
    o.address === undefined || o.address === LOOPBACK
      ? [`apiVersion: v1\nkind: Service\n${meta}\nspec: { type: ExternalName, externalName: localhost }\n`]
      : [
          `apiVersion: v1\nkind: Service\n${meta}\nspec: { ports: [{ port: ${securePort}, targetPort: ${securePort} }] }\n`,
          `apiVersion: v1\nkind: Endpoints\n${meta}\nsubsets: [{ addresses: [{ ip: ${o.address} }], ports: [{ port: ${securePort} }] }]\n`,
        ];
  return [...service, ...o.versions.map(apiService), ...(o.extraObjects ?? [])].join('---\n');
}

export class AggregatedApi {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly output: () => string,
  ) {}

  /** Starts the server, registers it, and resolves once the kube-apiserver serves every version of its group from it. */
  static async start(o: AggregatedApiOptions): Promise<AggregatedApi> {
    const certDir = await mkdtemp(join(tmpdir(), 'eo-aggregated-api-'));
    const securePort = await freeLoopbackPort();
    const address = o.address ?? LOOPBACK;
    const child = spawn(o.binary, o.args({ address, securePort, certDir }), { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-50_000)));
    const api = new AggregatedApi(child, certDir, () => output);
    try {
      const deadline = Date.now() + 60_000;
      const listening = (): Promise<boolean[]> =>
        Promise.all([
          acceptsOnLoopback(securePort, address),
          ...(o.alsoListensOn ?? []).map((port) => acceptsOnLoopback(port)),
        ]);
      while (!(await listening()).every((ok) => ok)) {
        if (!running(child)) throw new Error(`${o.what} exited (${child.exitCode ?? child.signalCode}):\n${output}`);
        if (Date.now() > deadline) throw new Error(`${o.what} did not listen within 60 s:\n${output}`);
        await sleep(100);
      }
      const applied = await kubectl(['apply', '-f', '-'], {
        input: registration(o, securePort),
        kubeconfig: o.kubeconfig,
      });
      if (applied.code !== 0) throw new Error(`registering ${o.what} failed: ${applied.stderr}`);
      const names = o.versions.map((v) => `apiservice/${v.version}.${o.group}`);
      const available = await kubectl(['wait', '--for=condition=Available', ...names, '--timeout=60s'], {
        kubeconfig: o.kubeconfig,
        timeoutMs: 70_000,
      });
      if (available.code !== 0) {
        const conditions = await kubectl(
          ['get', 'apiservices', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions}{"\\n"}{end}'],
          { kubeconfig: o.kubeconfig },
        );
        throw new Error(`${o.group} did not become Available: ${available.stderr} ${conditions.stdout}\n${output}`);
      }
    } catch (err) {
      await api.stop();
      throw err;
    }
    return api;
  }

  get log(): string {
    return this.output();
  }

  /** Ends the server. Its APIServices stay: the cluster they are registered in is the test's own. */
  async stop(): Promise<void> {
    if (running(this.child)) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000).then(() => this.child.kill('SIGKILL'))]);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
