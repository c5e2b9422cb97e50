/**
 * An aggregated API server run as a process on this machine for a test's own control plane, registered through the
 * kube-apiserver's aggregation layer as a cluster registers one: a Service in kube-system, its APIServices, and
 * whatever else it needs (RBAC). The Service is an ExternalName of localhost: the aggregator dials an ExternalName's
 * host, which reaches the server on this machine's loopback. Shared by custom-metrics-adapter.ts and metrics-server.ts.
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
  readonly args: (o: { readonly securePort: number; readonly certDir: string }) => readonly string[];
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
  return [
    `apiVersion: v1\nkind: Service\nmetadata: { name: ${o.service}, namespace: kube-system }\nspec: { type: ExternalName, externalName: localhost }\n`,
    ...o.versions.map(apiService),
    ...(o.extraObjects ?? []),
  ].join('---\n');
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
    const child = spawn(o.binary, o.args({ securePort, certDir }), { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-50_000)));
    const api = new AggregatedApi(child, certDir, () => output);
    try {
      const deadline = Date.now() + 60_000;
      const ports = [securePort, ...(o.alsoListensOn ?? [])];
      while (!(await Promise.all(ports.map(acceptsOnLoopback))).every((ok) => ok)) {
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
      if (available.code !== 0) throw new Error(`${o.group} did not become Available: ${available.stderr}\n${output}`);
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
