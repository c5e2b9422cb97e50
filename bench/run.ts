/**
 * `npm run bench`: every benchmark in turn, each in its own process so that one's heap and JIT
 * state do not colour the next. Each prints its own table and the ratio against its baseline,
 * measured in the same run. Loopback only; every loop is bounded in count and time.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benches = [
  { file: 'validate.ts', what: 'validators and `endpoint-operator validate`' },
  { file: 'webhook.ts', what: 'admission webhook latency at 200 requests/s' },
  { file: 'signin.ts', what: 'sign-in: /auth/pos/me against a bare fastify route, login latency' },
  { file: 'convergence.ts', what: '4,010 objects to Ready against a bare client (starts a control plane)' },
];
const only = process.argv.slice(2);
let failed = 0;
for (const b of benches) {
  if (only.length > 0 && !only.some((o) => b.file.startsWith(o))) continue;
  console.log(`\n=== ${b.file}: ${b.what}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(b.file, import.meta.url))], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`${b.file} failed (exit ${r.status ?? r.signal})`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
