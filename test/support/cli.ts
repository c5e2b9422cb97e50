import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { format } from 'node:util';
import { vi } from 'vitest';
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

let previousCall: Promise<unknown> = Promise.resolve();

/**
 * Calls a binary's or a subcommand's `main(argv)` in this process (the unit tier's way: runCli's child process
 * costs a Node start and a transform of the command's modules per call): `input` is its stdin, what it
 * prints on the console or process.stdout/stderr is captured, and an error it throws is reported as Node
 * reports an uncaught one (the stack on stderr, status 1). Calls run one at a time, since the streams are
 * the process's own.
 */
export function callMain(
  main: (argv: string[]) => Promise<number>,
  args: readonly string[],
  opts: { input?: string } = {},
): Promise<CliResult> {
  const call = previousCall.then(() => capture(main, args, opts.input ?? ''));
  previousCall = call.catch(() => undefined);
  return call;
}

async function capture(
  main: (argv: string[]) => Promise<number>,
  args: readonly string[],
  input: string,
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const writeTo =
    (into: string[]) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    };
  const printTo =
    (into: string[]) =>
    (...values: unknown[]): void =>
      void into.push(`${format(...values)}\n`);
  const spies = [
    vi.spyOn(process, 'stdin', 'get').mockReturnValue(Readable.from([Buffer.from(input)]) as typeof process.stdin),
    vi.spyOn(process.stdout, 'write').mockImplementation(writeTo(out)),
    vi.spyOn(process.stderr, 'write').mockImplementation(writeTo(err)),
    vi.spyOn(console, 'log').mockImplementation(printTo(out)),
    vi.spyOn(console, 'info').mockImplementation(printTo(out)),
    vi.spyOn(console, 'error').mockImplementation(printTo(err)),
    vi.spyOn(console, 'warn').mockImplementation(printTo(err)),
  ];
  let code: number;
  try {
    code = await main([...args]);
  } catch (thrown) {
    err.push(`${thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown)}\n`);
    code = 1;
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}
