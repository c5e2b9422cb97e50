/**
 * `npm run test:integration`: the `integration` and `real-node` vitest projects as two runs side by side (vitest
 * runs the projects of one run one file at a time between them all when each is `fileParallelism: false`). Each
 * run's output goes through as it comes, every line marked with its project; arguments are passed to both (a file
 * filter selects within each). Exits non-zero when either run fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const PROJECTS = ['integration', 'real-node'] as const;

const children = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

function run(project: string): Promise<number> {
  // --passWithNoTests: a file filter may select files of one project only.
  const args = ['vitest', 'run', '--project', project, '--passWithNoTests', ...process.argv.slice(2)];
  const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const mark = `[${project}] `;
  createInterface({ input: child.stdout }).on('line', (line) => process.stdout.write(`${mark}${line}\n`));
  createInterface({ input: child.stderr }).on('line', (line) => process.stderr.write(`${mark}${line}\n`));
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve(signal === null ? (code ?? 1) : 1);
    }),
  );
}

const codes = await Promise.all(PROJECTS.map(run));
for (const [i, code] of codes.entries()) if (code !== 0) console.error(`${PROJECTS[i]}: vitest exited ${code}`);
process.exit(codes.every((c) => c === 0) ? 0 : 1);
