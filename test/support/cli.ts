import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './examples.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  input?: string;
  timeoutMs?: number;
}

/** Runs `endpoint-operator <args>` from source in a child process, as a user would run the binary. */
export function runCli(args: readonly string[], opts: CliOptions = {}): Promise<CliResult> {
  return runEntry('test/support/run-cli.ts', args, opts);
}

/** Runs `endpoint-operator-dev <args>` (dev/main.ts, what `npm start` runs) from source, as runCli does. */
export function runDevCli(args: readonly string[], opts: CliOptions = {}): Promise<CliResult> {
  return runEntry('test/support/run-dev-cli.ts', args, opts);
}

function runEntry(entry: string, args: readonly string[], opts: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, entry), ...args], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}
