/**
 * One demo model server in the foreground, for tests that need a model server they can kill:
 *   node --import tsx dev/models/demo/main.ts --protocol KServeV1 --model fraud-v1 --version v1 [--port 0]
 * Prints one JSON line {"port": N} once listening; SIGTERM/SIGINT stop it.
 */
import { parseArgs } from 'node:util';
import { BACKEND_PROTOCOLS, type BackendProtocol } from '../../../src/api/prediction/v1/backend.js';
import { startDemoModelServer } from './index.js';

const { values } = parseArgs({
  options: {
    protocol: { type: 'string' },
    model: { type: 'string' },
    version: { type: 'string', default: 'v1' },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
const protocol = values.protocol as BackendProtocol;
if (
  !BACKEND_PROTOCOLS.includes(protocol) ||
  values.model === undefined ||
  (values.version !== 'v1' && values.version !== 'v2')
) {
  console.error(
    'usage: main.ts --protocol KServeV1|OpenInferenceV2 --model NAME [--version v1|v2] [--port N] [--host ADDR]',
  );
  process.exit(2);
}
const server = await startDemoModelServer({
  protocol,
  modelName: values.model,
  version: values.version,
  port: Number(values.port),
  host: values.host,
});
console.log(JSON.stringify({ port: server.port }));
for (const s of ['SIGTERM', 'SIGINT'] as const) process.once(s, () => void server.close().then(() => process.exit(0)));
