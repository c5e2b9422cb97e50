/**
 * Starts a worker thread on a module of this package: the compiled .js next to the caller in dist/,
 * or, when running from sources (tests, tsx), the .ts one, loaded after tsx's loader is registered
 * in the worker (a worker's `--import` does not reach its own module graph on Node 20).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `callerUrl` is the caller's `import.meta.url`; `name` the worker module's file name without extension, in the caller's directory. */
export function startModuleWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  // tsx's ESM API (its package exports map `import` to index.mjs beside the CommonJS index.cjs resolved here).
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  return new Worker(
    `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`,
    { ...options, eval: true },
  );
}
