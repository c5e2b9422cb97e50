/**
 * Worker threads on this package's TypeScript sources, for every test tier (vitest.config.ts setupFiles).
 *
 * Production code starts a worker on its compiled module, `new Worker(new URL('./json-worker.js', import.meta.url))`:
 * a file in dist/. Under vitest, the same URL points into src/, where only `json-worker.ts` exists, and on Node 20 a
 * worker inherits neither vitest's transform nor tsx's loader (not even through its own `--import`). So each test
 * file sees the real `node:worker_threads`, except that a `Worker` asked for such a `.js` file registers tsx's
 * loader in the new thread first and then imports the `.ts` source. Any other worker starts unchanged.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as workerThreads from 'node:worker_threads';
import { vi } from 'vitest';

/** The `.ts` source of a `.js` module that exists only as source, as a file URL; undefined for anything else. */
export function sourceOfMissingModule(filename: string | URL): string | undefined {
  const url = typeof filename === 'string' && !filename.startsWith('file:') ? undefined : new URL(filename);
  if (url === undefined || url.protocol !== 'file:' || !url.pathname.endsWith('.js')) return undefined;
  const path = fileURLToPath(url);
  const source = path.replace(/\.js$/, '.ts');
  return !existsSync(path) && existsSync(source) ? pathToFileURL(source).href : undefined;
}

/** The code of an `eval` worker that registers tsx's ESM loader, then imports `entry`. */
function tsxBootstrap(entry: string): string {
  // tsx's ESM API: its package exports map `import` to index.mjs, beside the CommonJS index.cjs resolved here.
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  return `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
}

vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof workerThreads>();
  class Worker extends real.Worker {
    constructor(filename: string | URL, options: workerThreads.WorkerOptions = {}) {
      const source = sourceOfMissingModule(filename);
      if (source === undefined) super(filename, options);
      else super(tsxBootstrap(source), { ...options, eval: true });
    }
  }
  return { ...real, Worker, default: { ...real, Worker } };
});
