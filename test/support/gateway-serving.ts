/**
 * When a gateway process serves, read from its "gateway serving" log line (src/gateway/server.ts): the ports it bound,
 * which it may have been given as 0. Used by the benchmarks' compiled gateways and the tests' CLI gateways alike. The
 * process's stdout is read for as long as it runs, so its log never fills the pipe.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ServingPorts {
  readonly port: number;
  /** Its health and metrics port; undefined when it serves none (`--health-port=-1`, or a build that does not say). */
  readonly healthPort: number | undefined;
}

/** `otherLine`: what to do with a line that is not a JSON log record (`--trace-gc` output, say). */
export function whenGatewayServes(child: ChildProcess, otherLine?: (line: string) => void): Promise<ServingPorts> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  return new Promise((resolve, reject) => {
    // Its last log lines, for the error when it exits before serving.
    const last: string[] = [];
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return void otherLine?.(line);
      last.push(line);
      if (last.length > 5) last.shift();
      const record = JSON.parse(line) as { msg?: string; port?: number; healthPort?: number };
      if (record.msg === 'gateway serving' && typeof record.port === 'number')
        resolve({ port: record.port, healthPort: record.healthPort });
    });
    child.once('exit', (code) =>
      reject(new Error(`gateway exited with ${code} before serving; its last log lines:\n${last.join('\n')}`)),
    );
  });
}
