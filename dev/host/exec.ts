import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface CaptureResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a short command and collects its output; a missing executable is exit code 127, as in a shell. */
export function capture(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<CaptureResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A failed spawn emits 'error' and may emit 'close' too: the first one wins.
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + err.message }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

export interface LoggedRunOptions {
  readonly logFile: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Called for every output line, e.g. to show build progress. */
  readonly onLine?: (line: string) => void;
  /** Run in its own process group (pid = pgid), e.g. so a watchdog can end it and everything it forked. */
  readonly ownProcessGroup?: boolean;
  readonly onSpawn?: (pid: number) => void;
}

/**
 * Runs a long command (apt-get, make) with stdout and stderr appended to a log file and returns the exit code.
 * The log keeps everything; the caller decides what to show.
 */
export function runLogged(cmd: string, args: readonly string[], opts: LoggedRunOptions): Promise<number> {
  return new Promise((resolve) => {
    const log = createWriteStream(opts.logFile, { flags: 'a' });
    log.write(`$ ${[cmd, ...args].join(' ')}\n`);
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: opts.ownProcessGroup === true,
    });
    child.once('spawn', () => {
      if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream.pipe(log, { end: false });
      if (opts.onLine) createInterface({ input: stream }).on('line', opts.onLine);
    }
    let finished = false;
    const finish = (code: number): void => {
      if (finished) return; // a failed spawn emits 'error' and may emit 'close' too
      finished = true;
      log.end(`[exit ${code}]\n`, () => resolve(code));
    };
    child.on('error', (err) => {
      log.write(`${err.message}\n`);
      finish(127);
    });
    child.on('close', (code, signal) => finish(code ?? (signal ? 128 : 1)));
  });
}
