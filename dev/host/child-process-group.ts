import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

/**
 * A long-running child (etcd, kube-apiserver) in its own process group (setsid), writing straight into its
 * log file. Its own group means one signal reaches everything it forks, and a signal sent to the Node process
 * group (Ctrl-C) does not bypass our orderly stop. A file rather than a pipe: the child keeps running and
 * logging even after the parent died, until the watchdog ends it.
 */
export class ChildProcessGroup {
  private exitCode: number | null | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    readonly name: string,
    readonly pid: number,
    readonly executable: string,
    readonly logFile: string,
    child: ReturnType<typeof spawn>,
  ) {
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : 1);
        resolve();
      });
    });
    // The parent must not wait for these children to exit before it may exit itself.
    child.unref();
  }

  static start(
    name: string,
    cmd: string,
    args: readonly string[],
    logFile: string,
    env?: NodeJS.ProcessEnv,
    /** What the process is once started, where `cmd` execs another program (nsenter, unshare): the stale-run check looks for it. */
    executable: string = cmd,
  ): Promise<ChildProcessGroup> {
    const fd = openSync(logFile, 'a');
    try {
      const child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], env: env ?? process.env });
      return new Promise((resolve, reject) => {
        child.once('error', (err) => reject(new Error(`cannot start ${name} (${cmd}): ${err.message}`)));
        child.once('spawn', () => {
          if (child.pid === undefined) reject(new Error(`cannot start ${name}: no pid`));
          else resolve(new ChildProcessGroup(name, child.pid, executable, logFile, child));
        });
      });
    } finally {
      closeSync(fd); // the child has its own copy
    }
  }

  /** undefined while running; the exit code (128 for a signal) after. */
  get exitStatus(): number | null | undefined {
    return this.exitCode;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** SIGTERM to the whole group, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    signalGroup(this.pid, 'SIGTERM');
    if (!(await settlesWithin(this.exited, graceMs))) {
      signalGroup(this.pid, 'SIGKILL');
      await settlesWithin(this.exited, 5_000);
    }
  }

  /** Synchronous last resort for process 'exit' handlers, where nothing asynchronous runs any more. */
  killNow(): void {
    if (this.running) signalGroup(this.pid, 'SIGKILL');
  }
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we want.
  }
}

/**
 * True when `p` settles within `ms`, false otherwise. The timer is cleared either way: a forgotten timer
 * would keep the process alive for its whole duration after stop(), and an unref'd one could let Node exit
 * in the middle of a stop, orphaning the children.
 */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
