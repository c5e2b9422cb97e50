import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackages, RUNTIME_PACKAGES, whichOnPath } from './apt.js';
import { ChildProcessGroup } from './child-process-group.js';
import { randomToken, renderTokenFile, writeCredentials } from './credentials.js';
import type { TokenUser } from './credentials.js';
import { ControlPlaneError } from './errors.js';
import { apiserverArgs, etcdArgs } from './flags.js';
import { ensureKubeApiserver } from './kube-apiserver.js';
import { renderKubeconfig } from './kubeconfig.js';
import { cacheRoot, runsDir } from './paths.js';
import { freeLoopbackPorts, isPortConflict } from './ports.js';
import { apiserverReady, etcdHealthy, waitUntilReady } from './readiness.js';
import { cleanupStaleRuns, writeRunRecord } from './run-registry.js';
import type { RunRecord } from './run-registry.js';
import { startWatchdog, WATCHDOG_NAME } from './watchdog.js';
import type { Watchdog } from './watchdog.js';

export interface ControlPlane {
  /** A kubeconfig with the admin token (group system:masters) and the apiserver's CA embedded. */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:PORT */
  readonly server: string;
  readonly adminToken: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  readonly caFile: string;
  /** http://127.0.0.1:PORT: direct etcd access, e.g. to compact it and so force 410 Gone on old watches. */
  readonly etcdEndpoint: string;
  readonly dataDir: string;
  /** Ends kube-apiserver then etcd (SIGTERM, then SIGKILL), removes a temporary data dir. Idempotent. */
  stop(): Promise<void>;
  /**
   * Ends only kube-apiserver (SIGTERM, then SIGKILL); etcd keeps running with all data, so fault tests can
   * see clients lose the apiserver and can change etcd behind its back. A no-op when it is not running.
   */
  stopApiserver(): Promise<void>;
  /**
   * Starts kube-apiserver again with the same flags, port, certificates, tokens and etcd (its log is
   * appended to), and resolves once it is ready. Rejects while it is still running or after stop().
   */
  startApiserver(): Promise<void>;
}

export interface StartControlPlaneOptions {
  /** Keep etcd's data here across runs; default: a temporary directory removed by stop(). */
  readonly dataDir?: string;
  readonly log?: (line: string) => void;
  /** More bearer-token users, e.g. an unprivileged one for RBAC tests. */
  readonly extraTokens?: readonly TokenUser[];
  /** Default off, so that compacting etcd makes old watches fail with 410 Gone (see flags.ts). */
  readonly watchCache?: boolean;
  readonly readyTimeoutMs?: number;
}

const PORT_ATTEMPTS = 3;

/** Starts etcd and kube-apiserver on free loopback ports and waits until the apiserver is ready. */
export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  for (const stale of await cleanupStaleRuns(runsDir())) log(`ended a leftover ${stale}`);

  const apiserverBin = await ensureKubeApiserver(log);
  await mkdir(join(cacheRoot(), 'logs'), { recursive: true });
  await ensureDebianPackages(RUNTIME_PACKAGES, log, join(cacheRoot(), 'logs', 'apt.log'));
  const etcdBin = (await whichOnPath('etcd', `${process.env['PATH'] ?? ''}:/usr/bin`)) ?? 'etcd';

  const removeDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'eo-control-plane-')));
  const logDir = join(dataDir, 'logs');
  await mkdir(logDir, { recursive: true });
  log(`data dir and logs: ${dataDir}`);
  const creds = await writeCredentials(join(dataDir, 'pki'));
  const caPem = await readFile(creds.caFile, 'utf8');
  const adminToken = randomToken();
  const tokenAuthFile = join(dataDir, 'tokens.csv');
  await writeFile(tokenAuthFile, renderTokenFile([{ token: adminToken, user: 'admin', uid: 'admin', groups: ['system:masters'] }, ...(opts.extraTokens ?? [])]), { mode: 0o600 });

  const run = new RunningProcesses(dataDir, removeDataDir);
  await run.record();
  const onExit = (): void => run.killNow();
  process.on('exit', onExit);
  try {
    for (let attempt = 1; ; attempt++) {
      const [etcdClientPort = 0, etcdPeerPort = 0, securePort = 0] = await freeLoopbackPorts(3);
      const etcdEndpoint = `http://127.0.0.1:${etcdClientPort}`;
      const server = `https://127.0.0.1:${securePort}`;

      const etcdLog = join(logDir, `etcd-${attempt}.log`);
      log(`starting etcd on ${etcdEndpoint}`);
      const etcd = await run.start('etcd', etcdBin, etcdArgs({ dataDir: join(dataDir, 'etcd'), clientPort: etcdClientPort, peerPort: etcdPeerPort }), etcdLog);
      const etcdReady = await waitUntilReady(etcd, () => etcdHealthy(etcdEndpoint), 30_000);
      if (!etcdReady.ready) {
        if ((await retryable(etcdLog)) && attempt < PORT_ATTEMPTS) {
          await run.stopAll();
          continue;
        }
        throw new ControlPlaneError(`etcd did not start: ${etcdReady.why}${await tail(etcdLog)}`, etcdLog);
      }

      const apiLog = join(logDir, `kube-apiserver-${attempt}.log`);
      log(`starting kube-apiserver on ${server}`);
      const flags = apiserverArgs({ etcdEndpoint, securePort, certDir: join(dataDir, 'pki'), ...creds, tokenAuthFile, watchCache: opts.watchCache ?? false });
      const started = Date.now();
      let apiserver = await run.start('kube-apiserver', apiserverBin, flags, apiLog);
      const apiReady = await waitUntilReady(apiserver, () => apiserverReady(server, caPem, adminToken), opts.readyTimeoutMs ?? 120_000);
      if (!apiReady.ready) {
        if ((await retryable(apiLog)) && attempt < PORT_ATTEMPTS) {
          await run.stopAll();
          continue;
        }
        throw new ControlPlaneError(`kube-apiserver did not become ready: ${apiReady.why}${await tail(apiLog)}`, apiLog);
      }
      log(`kube-apiserver ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

      const kubeconfigPath = join(dataDir, 'kubeconfig');
      await writeFile(kubeconfigPath, renderKubeconfig({ server, token: adminToken, caPem }), { mode: 0o600 });
      let stopping: Promise<void> | undefined;
      // One change of the apiserver at a time: a stop racing a start would leave a process nobody tracks.
      let apiserverChange: Promise<void> = Promise.resolve();
      const changeApiserver = (change: () => Promise<void>): Promise<void> => {
        const next = apiserverChange.then(change);
        apiserverChange = next.catch(() => undefined);
        return next;
      };
      return {
        kubeconfigPath,
        server,
        adminToken,
        caFile: creds.caFile,
        etcdEndpoint,
        dataDir,
        stop: () => {
          stopping ??= (async () => {
            process.off('exit', onExit);
            await run.stopAll();
            await run.forget();
          })();
          return stopping;
        },
        // After stop() there is nothing to stop, and stopOne() would write the run record stop() removed.
        stopApiserver: () => changeApiserver(() => (stopping === undefined ? run.stopOne(apiserver) : Promise.resolve())),
        startApiserver: () =>
          changeApiserver(async () => {
            if (stopping !== undefined) throw new ControlPlaneError('the control plane was stopped; start a new one');
            if (apiserver.running) throw new ControlPlaneError('kube-apiserver is already running; stopApiserver() first');
            log(`starting kube-apiserver again on ${server}`);
            const restarted = Date.now();
            apiserver = await run.start('kube-apiserver', apiserverBin, flags, apiLog);
            if (stopping !== undefined) {
              // stop() ran while it was being spawned, possibly after stopAll() had emptied the list.
              await run.stopOne(apiserver);
              throw new ControlPlaneError('the control plane was stopped while kube-apiserver started again');
            }
            const ready = await waitUntilReady(apiserver, () => apiserverReady(server, caPem, adminToken), opts.readyTimeoutMs ?? 120_000);
            if (!ready.ready) {
              // Nothing retries on another port here: clients hold this server's URL.
              await run.stopOne(apiserver);
              throw new ControlPlaneError(`kube-apiserver did not become ready again: ${ready.why}${await tail(apiLog)}`, apiLog);
            }
            log(`kube-apiserver ready again in ${((Date.now() - restarted) / 1000).toFixed(1)} s`);
          }),
      };
    }
  } catch (err) {
    // Keep the data dir: the error names log files inside it.
    await run.stopAll();
    await run.forget(false);
    process.off('exit', onExit);
    throw err;
  }
}

async function retryable(logFile: string): Promise<boolean> {
  return isPortConflict(await readFile(logFile, 'utf8').catch(() => ''));
}

async function tail(logFile: string, lines = 15): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const last = text.trimEnd().split('\n').slice(-lines);
  return last.length > 0 && last[0] !== '' ? `\n  last lines of the log:\n    ${last.join('\n    ')}` : '';
}

/** The children of one control plane, their watchdogs, and the run record that lists them all. */
class RunningProcesses {
  private readonly children: { proc: ChildProcessGroup; watchdog: Watchdog }[] = [];
  private recordFile: string | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly removeDataDir: boolean,
  ) {}

  async record(): Promise<void> {
    const record: RunRecord = {
      ownerPid: process.pid,
      startedAt: new Date().toISOString(),
      dataDir: this.dataDir,
      removeDataDir: this.removeDataDir,
      children: this.children.flatMap(({ proc, watchdog }) => [
        { name: proc.name, pid: proc.pid, executable: proc.executable },
        { name: `${proc.name} watchdog`, pid: watchdog.pid, executable: WATCHDOG_NAME },
      ]),
    };
    this.recordFile = await writeRunRecord(runsDir(), record, this.recordFile);
  }

  async start(name: string, bin: string, args: readonly string[], logFile: string): Promise<ChildProcessGroup> {
    const proc = await ChildProcessGroup.start(name, bin, args, logFile);
    // The watchdog starts before anything waits, so even a SIGKILL during a slow start leaves nothing behind.
    const watchdog = startWatchdog(process.pid, [proc.pid], this.removeDataDir ? this.dataDir : '');
    this.children.push({ proc, watchdog });
    await this.record();
    return proc;
  }

  /** Stops in reverse start order: the apiserver before the etcd it writes to. */
  async stopAll(): Promise<void> {
    while (this.children.length > 0) {
      const { proc, watchdog } = this.children.pop() as { proc: ChildProcessGroup; watchdog: Watchdog };
      await watchdog.dismiss();
      await proc.stop();
    }
    await this.record();
  }

  /** Stops one child and its watchdog, leaving the others running. */
  async stopOne(proc: ChildProcessGroup): Promise<void> {
    const index = this.children.findIndex((c) => c.proc === proc);
    const [child] = index < 0 ? [] : this.children.splice(index, 1);
    await child?.watchdog.dismiss();
    await proc.stop();
    await this.record();
  }

  async forget(removeData = this.removeDataDir): Promise<void> {
    if (this.recordFile !== undefined) await rm(this.recordFile, { force: true });
    if (removeData) await rm(this.dataDir, { recursive: true, force: true });
  }

  /** On a process exit without stop(): kill the children now; the watchdogs then remove the data dir. */
  killNow(): void {
    for (const { proc } of this.children) proc.killNow();
    if (this.recordFile !== undefined) rmSync(this.recordFile, { force: true });
  }
}
