import { spawn } from 'node:child_process';
import { settlesWithin } from './child-process-group.js';

/** The watchdog's $0, so `ps` and the stale-run cleanup recognise it. */
export const WATCHDOG_NAME = 'endpoint-operator-watchdog';

/**
 * A tiny bash loop in its own session that outlives the Node process: when the parent disappears (even by
 * SIGKILL, which runs no handler) it sends SIGTERM, then SIGKILL, to the children's process groups and
 * removes the temporary data dir. Linux's PR_SET_PDEATHSIG would do this per child, but Node cannot set it.
 */
const SCRIPT = `
parent=$1; datadir=$2; netns=$3; link=$4; cleanup=$5; shift 5
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
for g in "$@"; do kill -TERM -- "-$g" 2>/dev/null; done
for i in 1 2 3 4 5 6 7 8 9 10; do
  alive=0; for g in "$@"; do kill -0 -- "-$g" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && break; sleep 0.5
done
for g in "$@"; do kill -KILL -- "-$g" 2>/dev/null; done
if [ -n "$datadir" ]; then rm -rf -- "$datadir"; fi
if [ -n "$link" ]; then ip link del "$link" 2>/dev/null; fi
if [ -n "$netns" ]; then ip netns del "$netns" 2>/dev/null; fi
if [ -n "$cleanup" ] && [ -f "$cleanup" ]; then /bin/bash "$cleanup"; rm -f -- "$cleanup"; fi
`;

export interface Watchdog {
  readonly pid: number;
  /** Called by an orderly stop, which ends the children itself; resolves once the watchdog is gone. */
  dismiss(): Promise<void>;
}

/**
 * Starts the watchdog for `childGroups`; `removeDir` ('' for none) is deleted after they are gone, and so is
 * `network`'s namespace and veth pair (a model host, network.ts), and `cleanupScript` is run (the real
 * node's, node-cleanup.ts).
 */
export function startWatchdog(
  parentPid: number,
  childGroups: readonly number[],
  removeDir: string,
  network?: { readonly netns: string; readonly hostLink: string },
  cleanupScript?: string,
): Watchdog {
  // bash, not sh: dash's kill builtin cannot signal a process group (`kill -TERM -- -PGID`).
  const child = spawn(
    '/bin/bash',
    [
      '-c',
      SCRIPT,
      WATCHDOG_NAME,
      String(parentPid),
      removeDir,
      network?.netns ?? '',
      network?.hostLink ?? '',
      cleanupScript ?? '',
      ...childGroups.map(String),
    ],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error('cannot start the watchdog process (/bin/bash)');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid,
    dismiss: async () => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        return; // already gone
      }
      await settlesWithin(exited, 2_000);
    },
  };
}
