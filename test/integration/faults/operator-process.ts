/**
 * `endpoint-operator run` as a real, separate process, the way a Deployment runs it: spawned from
 * src through tsx (as test/support/cli.ts does) in its own process group, so that kill() is a real
 * SIGKILL of everything it is (no handler, no lease release, no drain) and nothing survives it.
 * A watchdog per process ends the group even if the test worker itself is killed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildProcessGroup, signalGroup } from '../../../dev/host/child-process-group.js';
import { distinctFreePorts, isPortConflict } from '../../../dev/cluster/ports.js';
import { startWatchdog, type Watchdog } from '../../../dev/host/watchdog.js';
import type { KubeObject, ResourceRef } from '../../../src/api/common/kube-object.js';
import { REPO_ROOT } from '../../support/examples.js';
import { testCluster } from '../../support/cluster.js';

export interface LeaseTimings {
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
}

export interface OperatorProcessOptions {
  /** Watched namespace; also the operator namespace, so the Lease lives there too. */
  readonly namespace: string;
  /** --identity: the holderIdentity this replica writes into the Lease. */
  readonly identity: string;
  readonly leaseName: string;
  readonly leaseTimings?: LeaseTimings;
  readonly workers?: number;
}

const START_ATTEMPTS = 3;

export class OperatorProcess {
  private constructor(
    readonly identity: string,
    readonly healthPort: number,
    readonly metricsPort: number,
    private readonly group: ChildProcessGroup,
    private readonly watchdog: Watchdog,
    private readonly logDir: string,
    private readonly logFile: string,
  ) {}

  /** Starts the process (no waiting for readiness: see waitReady). */
  static async start(options: OperatorProcessOptions): Promise<OperatorProcess> {
    const logDir = await mkdtemp(join(tmpdir(), `eo-fault-${options.identity}-`));
    for (let attempt = 1; ; attempt++) {
      const [healthPort, metricsPort] = (await distinctFreePorts(2)) as [number, number];
      const args = [
        '--import',
        'tsx',
        join(REPO_ROOT, 'test/support/run-cli.ts'),
        'run',
        '--kubeconfig',
        testCluster().kubeconfig,
        '--namespaces',
        options.namespace,
        '--operator-namespace',
        options.namespace,
        '--no-webhook',
        '--bind-address',
        '127.0.0.1',
        '--health-port',
        String(healthPort),
        '--metrics-port',
        String(metricsPort),
        '--metrics-auth=none',
        '--lease-name',
        options.leaseName,
        '--identity',
        options.identity,
        '--workers',
        String(options.workers ?? 4),
        ...(options.leaseTimings
          ? [
              '--lease-duration',
              String(options.leaseTimings.leaseDurationSeconds),
              '--renew-deadline',
              String(options.leaseTimings.renewDeadlineSeconds),
              '--retry-period',
              String(options.leaseTimings.retryPeriodSeconds),
            ]
          : []),
      ];
      const logFile = join(logDir, `attempt-${attempt}.log`);
      // The test's own environment may carry POD_NAME/POD_NAMESPACE/EO_* settings; the flags above must be the whole configuration.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(EO_|POD_|KUBECONFIG$)/.test(k)));
      const group = await ChildProcessGroup.start(`operator ${options.identity}`, process.execPath, args, logFile, {
        ...env,
        LOG_LEVEL: 'info',
      });
      const watchdog = startWatchdog(process.pid, [group.pid], '');
      const proc = new OperatorProcess(options.identity, healthPort, metricsPort, group, watchdog, logDir, logFile);
      // A port taken between distinctFreePorts and the bind: try again on other ports.
      await sleep(300);
      if (!group.running && attempt < START_ATTEMPTS && isPortConflict(await proc.log())) {
        await watchdog.dismiss();
        continue;
      }
      return proc;
    }
  }

  get running(): boolean {
    return this.group.running;
  }

  get pid(): number {
    return this.group.pid;
  }

  /** Waits until /readyz answers 200 (informer caches synced), failing early with the log if the process exited. */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.group.running)
        throw new Error(
          `operator ${this.identity} exited (${String(this.group.exitStatus)}) before it was ready:\n${await this.logTail()}`,
        );
      try {
        const res = await fetch(`http://127.0.0.1:${this.healthPort}/readyz`, { signal: AbortSignal.timeout(2_000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`operator ${this.identity} not ready within ${timeoutMs} ms:\n${await this.logTail()}`);
  }

  /** /metrics in Prometheus text format. */
  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`, { signal: AbortSignal.timeout(5_000) });
    if (res.status !== 200) throw new Error(`GET /metrics of ${this.identity}: ${res.status}`);
    return res.text();
  }

  /** SIGKILL to the whole process group; resolves once it has exited. */
  async kill(): Promise<void> {
    this.group.killNow();
    await this.waitExit(10_000);
    await this.watchdog.dismiss();
  }

  /** SIGTERM (a graceful stop: drain, release the lease), SIGKILL after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    await this.group.stop(graceMs);
    signalGroup(this.group.pid, 'SIGKILL'); // anything the leader forked and left behind
    await this.watchdog.dismiss();
  }

  /** Stops the process if needed and removes its log directory. */
  async dispose(): Promise<void> {
    if (this.group.running) await this.kill();
    else await this.watchdog.dismiss();
    await rm(this.logDir, { recursive: true, force: true });
  }

  async log(): Promise<string> {
    return readFile(this.logFile, 'utf8').catch(() => '');
  }

  async logTail(lines = 40): Promise<string> {
    return (await this.log()).trimEnd().split('\n').slice(-lines).join('\n');
  }

  private async waitExit(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.group.running) {
      if (Date.now() > deadline)
        throw new Error(
          `operator ${this.identity} (pid ${this.group.pid}) still running ${timeoutMs} ms after SIGKILL`,
        );
      await sleep(20);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The storage versions of the four reconciled kinds, as the fault tests read them. */
export const kinds = {
  predictionEndpoints: {
    group: 'prediction.endpoint-operator.dev',
    version: 'v1',
    plural: 'predictionendpoints',
    namespaced: true,
  },
  deployedModels: {
    group: 'prediction.endpoint-operator.dev',
    version: 'v1',
    plural: 'deployedmodels',
    namespaced: true,
  },
  registryServices: {
    group: 'registry.endpoint-operator.dev',
    version: 'v1',
    plural: 'registryservices',
    namespaced: true,
  },
  registryEndpoints: {
    group: 'registry.endpoint-operator.dev',
    version: 'v1',
    plural: 'registryendpoints',
    namespaced: true,
  },
} as const satisfies Record<string, ResourceRef>;

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

export function readyCondition(obj: KubeObject): Condition | undefined {
  const conditions = (obj.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as Condition[]).find((c) => c.type === 'Ready') : undefined;
}

/** Ready=True for the object's current generation, in both status.observedGeneration and the condition's. */
export function isConverged(obj: KubeObject): boolean {
  const generation = obj.metadata.generation;
  const ready = readyCondition(obj);
  return (
    (obj.status as { observedGeneration?: unknown } | undefined)?.observedGeneration === generation &&
    ready?.status === 'True' &&
    ready.observedGeneration === generation
  );
}
