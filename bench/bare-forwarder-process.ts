/**
 * bare-forwarder.ts in a process of its own (its CPU is then its own), over TLS when given a certificate:
 *   --upstream http://host:port --path /v1/models/m:predict [--cert file --key file] [--router node|fastify]
 * Reports `{port}` to its parent over IPC and exits when the parent says so (or goes away).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startBareForwarder, type ForwarderRouter } from './bare-forwarder.js';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    path: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    router: { type: 'string', default: 'node' },
  },
});
if (values.upstream === undefined || values.path === undefined) throw new Error('--upstream and --path are required');
const tls =
  values.cert !== undefined && values.key !== undefined
    ? { cert: await readFile(values.cert, 'utf8'), key: await readFile(values.key, 'utf8') }
    : undefined;
if (values.router !== 'node' && values.router !== 'fastify') throw new Error('--router is node or fastify');
const { port } = await startBareForwarder(values.upstream, values.path, tls, values.router satisfies ForwarderRouter);
process.send?.({ port });
process.on('message', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
