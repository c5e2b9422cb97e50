/**
 * Validations per second of typical prediction objects on one core (Node runs the loop on one
 * thread). Run: `npx tsx bench/validate-prediction.ts [seconds]`. Goal: ≥ 50,000/s for a
 * PredictionEndpoint, so that admission of a GitOps sync of thousands of objects is never the bottleneck.
 */
import { defaultValidationOptions } from '../src/api/common/kind.js';
import { validateDeployedModel } from '../src/api/prediction/v1/deployed-model-validation.js';
import { validatePredictionEndpoint } from '../src/api/prediction/v1/endpoint-validation.js';
import { computeEtag } from '../src/api/prediction/v1/etag.js';
import { recordResults, type Goal } from './results.js';

const endpoint = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'PredictionEndpoint',
  metadata: { name: 'fraud-scoring', namespace: 'endpoint-demo' },
  spec: {
    displayName: 'Fraud scoring (card payments)',
    description: 'Scores card-present and card-not-present payments for fraud in real time.',
    trafficSplit: { '4712380917': 70, '8815520493': 30 },
    labels: { team: 'risk-ml', env: 'production', 'cost-center': 'cc-4021', équipe: 'données' },
    encryptionSpec: { kmsKeyName: 'projects/risk-sec/locations/europe-west4/keyRings/ml/cryptoKeys/endpoints' },
    network: 'projects/482913557102/global/networks/ml-serving-vpc',
    predictRequestResponseLoggingConfig: {
      enabled: true,
      samplingRate: 0.1,
      bigqueryDestination: { outputUri: 'bq://risk-analytics.prediction_logs.fraud' },
    },
  },
};

const updated = {
  ...endpoint,
  spec: { ...endpoint.spec, trafficSplit: { '4712380917': 50, '8815520493': 50 }, etag: computeEtag(endpoint.spec) },
};
const stored = { ...endpoint, status: { etag: computeEtag(endpoint.spec) } };

const model = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'DeployedModel',
  metadata: { name: 'fraud-scoring-champion', namespace: 'endpoint-demo' },
  spec: {
    endpointRef: { name: 'fraud-scoring' },
    id: '4712380917',
    model: 'projects/risk-ml-prod/locations/europe-west4/models/fraud-gbt@7',
    displayName: 'fraud-gbt v7 (champion)',
    dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 2, maxReplicaCount: 10 },
  },
};

function measure(id: string, name: string, seconds: number, run: () => number, goal?: Goal): void {
  // Warm up so the JIT has compiled the validators before the clock starts.
  for (let i = 0; i < 20_000; i++) run();
  let count = 0;
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  while (performance.now() < deadline) {
    for (let i = 0; i < 1000; i++) errors += run();
    count += 1000;
  }
  const elapsed = (performance.now() - started) / 1000;
  if (errors > 0) throw new Error(`${name}: the benchmark object is invalid (${errors} errors)`);
  console.log(
    `${name.padEnd(40)} ${Math.round(count / elapsed)
      .toLocaleString('en-US')
      .padStart(10)} validations/s  (${((1e6 * elapsed) / count).toFixed(2)} µs each)`,
  );
  recordResults([
    {
      id,
      name: `${name}, one core`,
      value: Math.round(count / elapsed),
      unit: '/s',
      ...(goal ? { goal } : {}),
      notes: `${((1e6 * elapsed) / count).toFixed(2)} µs each`,
    },
  ]);
}

const seconds = Number(process.argv[2] ?? '3');
measure(
  'B4.validator.pe_create_per_s',
  'PredictionEndpoint create',
  seconds,
  () => validatePredictionEndpoint(endpoint, undefined, defaultValidationOptions).errors.length,
  { op: '>=', value: 50_000 },
);
measure(
  'B4.validator.pe_update_per_s',
  'PredictionEndpoint update (etag check)',
  seconds,
  () => validatePredictionEndpoint(updated, stored, defaultValidationOptions).errors.length,
);
measure(
  'B4.validator.dm_create_per_s',
  'DeployedModel create',
  seconds,
  () => validateDeployedModel(model, undefined, defaultValidationOptions).errors.length,
);
