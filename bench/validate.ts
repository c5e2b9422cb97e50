/**
 * `npm run bench:validate`: validator throughput on one core, and `endpoint-operator validate`
 * over one file of 10,000 manifests (goals: ≥ 50,000 PredictionEndpoints/s; < 3 s for the file).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { defaultValidationOptions } from '../src/api/common/kind.js';
import { findKind } from '../src/api/kinds.js';
import { recordResults } from './results.js';

function typicalEndpoint(i: number): Record<string, unknown> {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: `churn-${i}`, namespace: 'team-a', generation: 1 },
    spec: {
      displayName: `Churn prediction ${i}`,
      description: 'Scores customers by churn risk.',
      labels: { team: 'growth', env: 'prod', 'cost-center': 'cc-42' },
      trafficSplit: { '1001': 70, '1002': 30 },
      encryptionSpec: { kmsKeyName: 'projects/acme/locations/europe-west4/keyRings/ml/cryptoKeys/endpoints' },
      network: 'projects/123456789/global/networks/ml-vpc',
      predictRequestResponseLoggingConfig: {
        enabled: true,
        samplingRate: 0.1,
        bigqueryDestination: { outputUri: 'bq://acme-ml.prediction_logs.churn' },
      },
    },
  };
}

function validatorThroughput(seconds: number): { perSecond: number; validated: number } {
  const found = findKind('prediction.endpoint-operator.dev/v1', 'PredictionEndpoint');
  if (!found) throw new Error('PredictionEndpoint is not registered');
  const objects = Array.from({ length: 1000 }, (_, i) => typicalEndpoint(i));
  for (const o of objects) {
    const r = found.version.validate(o, undefined, defaultValidationOptions);
    if (r.errors.length > 0) throw new Error(`benchmark object is invalid: ${JSON.stringify(r.errors)}`);
  }
  let validated = 0;
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() - start < budget) {
    for (const o of objects) found.version.validate(o, undefined, defaultValidationOptions);
    validated += objects.length;
  }
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  return { perSecond: validated / elapsed, validated };
}

function cliOverFile(count: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'eo-bench-validate-'));
  try {
    const file = join(dir, 'manifests.yaml');
    writeFileSync(file, Array.from({ length: count }, (_, i) => yaml.dump(typicalEndpoint(i))).join('---\n'));
    const bin = new URL('../bin/endpoint-operator.js', import.meta.url).pathname;
    const start = process.hrtime.bigint();
    execFileSync(process.execPath, [bin, 'validate', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    return Number(process.hrtime.bigint() - start) / 1e9;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const throughput = validatorThroughput(3);
const cliSeconds = cliOverFile(10_000);
console.log('benchmark                                        result        goal');
console.log(
  `validator, typical PredictionEndpoint (1 core)   ${Math.round(throughput.perSecond).toLocaleString('en-US').padStart(9)}/s   >= 50,000/s`,
);
console.log(`validate -f <10,000 manifests> (whole process)   ${cliSeconds.toFixed(2).padStart(9)} s    < 3 s`);
recordResults([
  {
    id: 'B4.validator.pe_per_s',
    name: 'validator, typical PredictionEndpoint, one core',
    value: Math.round(throughput.perSecond),
    unit: '/s',
    goal: { op: '>=', value: 50_000 },
    notes: `${throughput.validated} validations in 3 s`,
  },
  {
    id: 'B4.validate_cli.seconds',
    name: '`endpoint-operator validate -f` over one file of 10,000 manifests (whole process)',
    value: Number(cliSeconds.toFixed(3)),
    unit: 's',
    goal: { op: '<=', value: 3 },
  },
]);
