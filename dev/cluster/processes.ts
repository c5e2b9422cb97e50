import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { ChildProcessGroup } from '../host/child-process-group.js';
import { runsDir } from '../host/paths.js';
import { writeRunRecord, type RunRecord } from '../host/run-registry.js';
import { startWatchdog, WATCHDOG_NAME, type Watchdog } from '../host/watchdog.js';
import type { ModelHost } from './network.js';

/** The children of one control plane, their watchdogs, and the run record that lists them all. */
export class RunningProcesses {
  private readonly children: { proc: ChildProcessGroup; watchdog: Watchdog }[] = [];
  private recordFile: string | undefined;
  private network: Pick<ModelHost, 'netns' | 'hostLink'> | undefined;
  private networkWatchdog: Watchdog | undefined;
  private cleanupScript: string | undefined;
  private cleanupWatchdog: Watchdog | undefined;

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
      ...(this.network !== undefined
        ? { network: { netns: this.network.netns, hostLink: this.network.hostLink } }
        : {}),
      ...(this.cleanupScript !== undefined ? { cleanupScript: this.cleanupScript } : {}),
      children: this.children.flatMap(({ proc, watchdog }) => [
        { name: proc.name, pid: proc.pid, executable: proc.executable },
        { name: `${proc.name} watchdog`, pid: watchdog.pid, executable: WATCHDOG_NAME },
      ]),
    };
    this.recordFile = await writeRunRecord(runsDir(), record, this.recordFile);
  }

  /** The run's model host: recorded, and removed by a watchdog if this process dies without stop(). */
  async adoptNetwork(network: Pick<ModelHost, 'netns' | 'hostLink'>): Promise<void> {
    this.network = network;
    this.networkWatchdog = startWatchdog(process.pid, [], '', network);
    await this.record();
  }

  /** A script that undoes what the run made outside its processes (the real node's): run by a watchdog if this process dies without stop(). */
  async adoptCleanup(script: string): Promise<void> {
    this.cleanupScript = script;
    this.cleanupWatchdog = startWatchdog(process.pid, [], '', undefined, script);
    await this.record();
  }

  /** Dismisses the clean-up's watchdog and forgets the script: the caller runs it itself. */
  async releaseCleanup(): Promise<string | undefined> {
    await this.cleanupWatchdog?.dismiss();
    const script = this.cleanupScript;
    this.cleanupScript = undefined;
    this.cleanupWatchdog = undefined;
    await this.record();
    return script;
  }

  /** Dismisses the network's watchdog and forgets it: the caller removes the network itself. */
  async releaseNetwork(): Promise<Pick<ModelHost, 'netns' | 'hostLink'> | undefined> {
    await this.networkWatchdog?.dismiss();
    const network = this.network;
    this.network = undefined;
    this.networkWatchdog = undefined;
    return network;
  }

  get recordPath(): string | undefined {
    return this.recordFile;
  }

  async start(
    name: string,
    bin: string,
    args: readonly string[],
    logFile: string,
    opts: { readonly env?: NodeJS.ProcessEnv; readonly executable?: string } = {},
  ): Promise<ChildProcessGroup> {
    const proc = await ChildProcessGroup.start(name, bin, args, logFile, opts.env, opts.executable ?? bin);
    // The watchdog starts before anything waits, so even a SIGKILL during a slow start leaves nothing behind.
    const watchdog = startWatchdog(process.pid, [proc.pid], this.removeDataDir ? this.dataDir : '');
    this.children.push({ proc, watchdog });
    await this.record();
    return proc;
  }

  /** Stops in reverse start order: the controllers before the apiserver, the apiserver before the etcd it writes to. */
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
