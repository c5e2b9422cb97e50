/**
 * The admission webhook server of a compiled tree (`--root`: this checkout's or an earlier commit's, built by
 * old-build.ts) in a process of its own, so its CPU is its own; serving the PEM files given, logging one line
 * per review to /dev/null as in production:
 *   --root /tmp/eo-bench-gateway-<sha>/ --cert file --key file
 * Reports `{port}` to its parent over IPC and exits when the parent says so (or goes away).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type * as KindModule from '../src/api/common/kind.js';
import type * as ServerModule from '../src/webhook/server.js';

const { values } = parseArgs({
  options: { root: { type: 'string' }, cert: { type: 'string' }, key: { type: 'string' } },
});
if (values.cert === undefined || values.key === undefined) throw new Error('--cert and --key are required');
const root = values.root ?? fileURLToPath(new URL('..', import.meta.url));
const compiled = (path: string): string => pathToFileURL(join(root, 'dist/src', path)).href;
// The compared trees export these two with the same shapes.
const { startWebhookServer } = (await import(compiled('webhook/server.js'))) as typeof ServerModule;
const { defaultValidationOptions } = (await import(compiled('api/common/kind.js'))) as typeof KindModule;
const server = await startWebhookServer({
  port: 0,
  host: '127.0.0.1',
  tls: { cert: await readFile(values.cert, 'utf8'), key: await readFile(values.key, 'utf8') },
  options: defaultValidationOptions,
  log: pino(pino.destination('/dev/null')),
});
process.send?.({ port: server.port });
const stop = (): void => void server.close().finally(() => process.exit(0));
process.on('message', stop);
process.on('disconnect', stop);
