/**
 * A benchmark's server half in its own process (`<file> --serve`), so the load generator's CPU is not
 * counted as the server's. The child prints one JSON line when it listens and answers each `cpu` line
 * on stdin with `{"cpuMicros": N}` (its own process.cpuUsage()).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

export interface ServeChild {
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  /** The next line the child printed; rejects once the child has exited. */
  nextLine(): Promise<string>;
  /** The child's CPU time so far, user + system, in microseconds. */
  cpuMicros(): Promise<number>;
}

export function startServeChild(file: string, nodeFlags: readonly string[] = []): ServeChild {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', file, '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiters: { resolve: (line: string) => void; reject: (err: Error) => void }[] = [];
  let exited: Error | undefined;
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const w = waiters.shift();
      if (w) w.resolve(line);
      else lines.push(line);
    }
  });
  child.once('exit', (code) => {
    exited = new Error(`server process exited with ${String(code)}`);
    for (const w of waiters.splice(0)) w.reject(exited);
  });
  const nextLine = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const ready = lines.shift();
      if (ready !== undefined) return resolve(ready);
      if (exited) return reject(exited);
      waiters.push({ resolve, reject });
    });
  return {
    child,
    nextLine,
    async cpuMicros() {
      child.stdin.write('cpu\n');
      return (JSON.parse(await nextLine()) as { cpuMicros: number }).cpuMicros;
    },
  };
}
