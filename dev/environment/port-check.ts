/**
 * `dev` checks every port it will open before it starts anything: a taken port found after the
 * control plane has been built and started costs a minute and ends in `EADDRINUSE`. Each port
 * carries the flag that moves it, so the answer to a conflict is the command line that avoids it.
 */
import { createServer } from 'node:net';

export interface PlannedPort {
  /** What listens there, for the message: "the sign-in API". */
  readonly what: string;
  readonly host: string;
  /** 0 = any free port (never taken). */
  readonly port: number;
  /** The flag that changes it: "--signin-port". */
  readonly flag: string;
}

/** Why `port` cannot be bound on `host` now (`EADDRINUSE`, `EACCES`...), or undefined when it can. */
export function bindProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'EADDRINUSE' ? 'is in use' : `cannot be opened (${err.code ?? err.message})`),
    );
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** One line per port that cannot be used, each naming the flag that changes it; empty when all are free. */
export async function portProblems(planned: readonly PlannedPort[]): Promise<string[]> {
  const problems: string[] = [];
  const seen = new Map<number, PlannedPort>();
  for (const p of planned) {
    if (p.port === 0) continue;
    const earlier = seen.get(p.port);
    if (earlier !== undefined) {
      problems.push(
        `port ${p.port} is planned twice (${earlier.what}, ${earlier.flag}; and ${p.what}): change it with ${p.flag} PORT`,
      );
      continue;
    }
    seen.set(p.port, p);
    const problem = await bindProblem(p.host, p.port);
    if (problem !== undefined)
      problems.push(
        `port ${p.port} on ${p.host} (${p.what}) ${problem}: choose another with ${p.flag} PORT (0 = any free port)`,
      );
  }
  return problems;
}
