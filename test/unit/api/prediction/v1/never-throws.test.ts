import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deployedModelSpecSchema } from '../../../../../src/api/prediction/v1/deployed-model-schema.js';
import { predictionEndpointSpecSchema } from '../../../../../src/api/prediction/v1/endpoint-schema.js';
import { deployedModel, endpoint, validateEndpoint, validateModel } from './fixtures.js';

// Validators sit behind an admission webhook and the validate CLI: they get whatever a YAML file
// or an AdmissionReview holds. Whatever it is, they must return a result, never throw.

const anything = fc.anything({
  withNullPrototype: true,
  withObjectString: true,
  withBoxedValues: true,
  withSparseArray: true,
  maxDepth: 4,
});

/** Values that look like a spec field by field, so that the semantic rules (not only the type checks) run. */
const fieldValue = fc.oneof(
  anything,
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.integer({ min: -5, max: 105 }),
  fc.double(),
  fc.boolean(),
  fc.dictionary(
    fc.oneof(fc.string(), fc.stringMatching(/^[0-9]{1,11}$/)),
    fc.oneof(fc.integer({ min: -1, max: 101 }), fc.string({ unit: 'grapheme' }), anything),
  ),
);
const endpointSpec = fc.record(
  {
    displayName: fieldValue,
    description: fieldValue,
    trafficSplit: fieldValue,
    etag: fc.oneof(fc.string(), fieldValue),
    labels: fieldValue,
    encryptionSpec: fc.oneof(fc.record({ kmsKeyName: fieldValue }), fieldValue),
    network: fc.oneof(fc.constant('projects/1/global/networks/n'), fieldValue),
    enablePrivateServiceConnect: fieldValue,
    predictRequestResponseLoggingConfig: fc.oneof(
      fc.record({
        samplingRate: fieldValue,
        bigqueryDestination: fc.record({
          outputUri: fc.oneof(
            fc.string().map((s) => `bq://${s}`),
            fieldValue,
          ),
        }),
      }),
      fieldValue,
    ),
  },
  { requiredKeys: [] },
);
const modelSpec = fc.record(
  {
    endpointRef: fc.oneof(fc.record({ name: fieldValue }), fieldValue),
    id: fc.oneof(fc.stringMatching(/^[0-9]{0,11}$/), fieldValue),
    model: fieldValue,
    displayName: fieldValue,
    dedicatedResources: fc.oneof(
      fc.record({
        machineSpec: fc.oneof(fc.record({ machineType: fieldValue, acceleratorCount: fieldValue }), fieldValue),
        minReplicaCount: fieldValue,
        maxReplicaCount: fieldValue,
      }),
      fieldValue,
    ),
    automaticResources: fc.oneof(fc.record({ minReplicaCount: fieldValue, maxReplicaCount: fieldValue }), fieldValue),
  },
  { requiredKeys: [] },
);
const object = (spec: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof(
    anything,
    fc.record(
      { spec, status: fc.oneof(anything, fc.record({ etag: fieldValue, id: fieldValue })) },
      { requiredKeys: [] },
    ),
  );

/** What the apiserver stores: it prunes null fields of a structural schema before validation. */
function withoutNulls(spec: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== null));
}

function wellFormed(result: { errors: { field: unknown; detail: unknown }[]; warnings: unknown[] }): void {
  expect(Array.isArray(result.errors)).toBe(true);
  expect(Array.isArray(result.warnings)).toBe(true);
  for (const e of result.errors) {
    expect(typeof e.field).toBe('string');
    expect(typeof e.detail).toBe('string');
  }
}

// Thousands of property runs: CPU work whose time depends on the machine's load; the timeout only catches a hang.
describe('the prediction validators never throw', { timeout: 60_000 }, () => {
  it('on arbitrary PredictionEndpoint-like input, on create and on update', () => {
    fc.assert(
      fc.property(object(endpointSpec), object(endpointSpec), (obj, old) => {
        wellFormed(validateEndpoint(obj));
        wellFormed(validateEndpoint(obj, old));
      }),
      { numRuns: 2500 },
    );
  });

  it('on arbitrary DeployedModel-like input, on create and on update', () => {
    fc.assert(
      fc.property(object(modelSpec), object(modelSpec), (obj, old) => {
        wellFormed(validateModel(obj));
        wellFormed(validateModel(obj, old));
      }),
      { numRuns: 2500 },
    );
  });

  it('accepts only specs the CRD schema (zod) accepts too', () => {
    fc.assert(
      fc.property(endpointSpec, (spec) => {
        if (validateEndpoint({ spec }).errors.length === 0)
          expect(predictionEndpointSpecSchema.safeParse(withoutNulls(spec)).success).toBe(true);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(modelSpec, (spec) => {
        if (validateModel({ spec }).errors.length === 0)
          expect(deployedModelSpecSchema.safeParse(withoutNulls(spec)).success).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('on 1 MB strings everywhere, quickly, with short messages', () => {
    const huge = 'A'.repeat(1 << 20);
    const started = performance.now();
    const ep = validateEndpoint(
      endpoint({
        displayName: huge,
        description: huge,
        labels: { [huge]: huge },
        trafficSplit: { [huge]: 100 },
        network: huge,
        etag: huge,
        encryptionSpec: { kmsKeyName: huge },
        predictRequestResponseLoggingConfig: { bigqueryDestination: { outputUri: `bq://${huge}` } },
      }),
      endpoint({ displayName: huge }),
    );
    const dm = validateModel(
      deployedModel({ endpointRef: { name: huge }, id: huge, model: huge, displayName: huge }),
      deployedModel({ id: huge }),
    );
    expect(performance.now() - started).toBeLessThan(2000);
    expect(ep.errors.length).toBeGreaterThan(5);
    expect(dm.errors.length).toBeGreaterThan(3);
    for (const e of [...ep.errors, ...dm.errors]) {
      expect(e.field.length).toBeLessThan(200);
      expect(e.detail.length).toBeLessThan(1000);
    }
  });

  it('on deeply nested input', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = { a: deep, 0: [deep] };
    let deepArray: unknown = [];
    for (let i = 0; i < 100_000; i++) deepArray = [deepArray];
    for (const value of [deep, deepArray]) {
      const spec = {
        displayName: value,
        labels: value,
        trafficSplit: { '1': value },
        predictRequestResponseLoggingConfig: value,
        unknownField: value,
      };
      wellFormed(validateEndpoint({ spec }, { spec, status: { etag: 'x' } }));
      wellFormed(
        validateEndpoint({ spec: { ...spec, etag: 'e' } }, { spec: { ...spec, x: 1 }, status: { etag: 'x' } }),
      );
      wellFormed(
        validateModel(
          { spec: { endpointRef: value, dedicatedResources: value, id: value } },
          { spec: value, status: value },
        ),
      );
      wellFormed(validateEndpoint(value, value));
      wellFormed(validateModel(value, value));
    }
  });
});
