/** Issue 17, item 7: fields the version does not have are reported (warnings; errors with strict). */
import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../../src/api/common/kind.js';
import { unknownFields } from '../../../../src/api/common/unknown-fields.js';
import { deployedModelKind } from '../../../../src/api/prediction/v1/kinds.js';
import { validateObject } from '../../../../src/api/validate-object.js';

const ENDPOINT =
  'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout/endpoints/checkout-1';
const re = (version: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: `registry.endpoint-operator.dev/${version}`,
  kind: 'RegistryEndpoint',
  metadata: { name: 'x', namespace: 'ns' },
  spec: { name: ENDPOINT, ...spec },
  ...extra,
});
const lenient = (o: unknown) => validateObject(o, undefined, defaultValidationOptions);
const strict = (o: unknown) => validateObject(o, undefined, { ...defaultValidationOptions, strict: true });

describe('fields a version does not have', () => {
  it.each([
    ['a typo', re('v1', { adress: '10.0.0.1' }), 'spec.adress', /did you mean spec\.address\?/],
    ['a case slip', re('v1', { Port: 80 }), 'spec.Port', /did you mean spec\.port\?/],
    [
      'v1 spec.network',
      re('v1', { network: 'projects/1/locations/global/networks/n' }),
      'spec.network',
      /only registry\.endpoint-operator\.dev\/v1beta1 has spec\.network/,
    ],
    ['v1 spec.metadata', re('v1', { metadata: { team: 'a' } }), 'spec.metadata', /v1 calls it spec\.annotations/],
    [
      'v1beta1 spec.annotations',
      re('v1beta1', { annotations: { team: 'a' } }),
      'spec.annotations',
      /v1beta1 calls it spec\.metadata/,
    ],
    ['a top-level typo', re('v1', {}, { sepc: {} }), 'sepc', /did you mean spec\?/],
    [
      'a metadata typo',
      { ...re('v1', {}), metadata: { name: 'x', lables: { a: 'b' } } },
      'metadata.lables',
      /did you mean metadata\.labels\?/,
    ],
  ])('%s: a warning, and an error with strict', (_what, o, field, hint) => {
    const warned = lenient(o);
    expect(warned.outcome).toBe('valid');
    expect(warned.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${field.replace(/\./g, '\\.')}: unknown field: not in RegistryEndpoint registry\\.endpoint-operator\\.dev/v1(beta1)?, so the apiserver drops \\(prunes\\) it`,
        ),
      ),
    ]);
    expect(warned.warnings[0]).toMatch(hint);
    const refused = strict(o);
    expect(refused.outcome).toBe('invalid');
    expect(refused.errors.map((e) => [e.field, e.type])).toEqual([[field, 'FieldValueForbidden']]);
  });

  it('finds them in nested objects and list items, not among map keys or in status', () => {
    const spec = {
      endpointRef: { name: 'e', namespace: 'other' },
      model: 'projects/p/locations/l/models/m',
      dedicatedResources: {
        machineSpec: { machineType: 'n1-standard-4', gpu: 1 },
        minReplicaCount: 1,
        autoscalingMetricSpecs: [{ metricName: 'cpu', targt: 60 }],
      },
    };
    const found = unknownFields(deployedModelKind.versions[0]!.spec, {
      apiVersion: 'a',
      kind: 'k',
      metadata: {},
      spec,
      status: { anything: 1 },
    });
    expect(found.map((f) => f.path)).toEqual([
      'spec.endpointRef.namespace',
      'spec.dedicatedResources.machineSpec.gpu',
      'spec.dedicatedResources.autoscalingMetricSpecs[0].targt',
    ]);
    expect(found[2]?.didYouMean).toBe('spec.dedicatedResources.autoscalingMetricSpecs[0].target');
    expect(lenient(re('v1', { annotations: { 'any-key': 'x' } })).warnings).toEqual([]);
  });

  it('does not suggest a far-away name', () => {
    expect(lenient(re('v1', { zone: 'a' })).warnings[0]).toMatch(/; remove it$/);
  });
});

describe('reserved keys are ignored, not judged (issue 17, item 5)', () => {
  it('accepts endpoint-operator.dev/-bad in v1 annotations and v1beta1 metadata, with one warning that does not call it invalid', () => {
    for (const [version, field] of [
      ['v1', 'annotations'],
      ['v1beta1', 'metadata'],
    ] as const) {
      const v = lenient(
        re(version, { [field]: { 'endpoint-operator.dev/-bad': 'x', 'team.endpoint-operator.io/a/b/c': 'y' } }),
      );
      expect(v.errors).toEqual([]);
      expect(v.warnings).toHaveLength(2);
      for (const w of v.warnings) expect(w).toMatch(/reserved prefix .* ignored: kept in spec, not validated/);
    }
  });
});
