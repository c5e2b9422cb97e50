/**
 * Issue 17, items 2 and 3: `""` in an optional string field and `null` anywhere mean unset, for every
 * kind of areas B and C, in the validators (common/unset.ts) and in the CRD patterns (crd/openapi.ts).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defaultValidationOptions } from '../../../../src/api/common/kind.js';
import { withoutUnset } from '../../../../src/api/common/unset.js';
import { crdFor } from '../../../../src/api/crd/generate.js';
import { toStructuralSchema } from '../../../../src/api/crd/openapi.js';
import { validateObject } from '../../../../src/api/validate-object.js';
import { deployedModelKind, predictionEndpointKind } from '../../../../src/api/prediction/v1/kinds.js';
import { registryEndpointKind } from '../../../../src/api/registry/kinds.js';

const SERVICE = 'projects/my-project/locations/us-east1/namespaces/payments/services/checkout';
const ENDPOINT = `${SERVICE}/endpoints/checkout-1`;

function obj(apiVersion: string, kind: string, spec: Record<string, unknown>) {
  return { apiVersion, kind, metadata: { name: 'x', namespace: 'ns' }, spec };
}
const pe = (spec: Record<string, unknown>) =>
  obj('prediction.endpoint-operator.dev/v1', 'PredictionEndpoint', { displayName: 'd', ...spec });
const dm = (spec: Record<string, unknown>) =>
  obj('prediction.endpoint-operator.dev/v1', 'DeployedModel', {
    endpointRef: { name: 'e' },
    model: 'projects/p/locations/l/models/m',
    automaticResources: {},
    ...spec,
  });
const re = (version: string, spec: Record<string, unknown>) =>
  obj(`registry.endpoint-operator.dev/${version}`, 'RegistryEndpoint', { name: ENDPOINT, ...spec });

const errors = (o: unknown, old?: unknown) =>
  validateObject(o, old, defaultValidationOptions).errors.map((e) => `${e.field}: ${e.detail}`);

describe('the empty string means unset', () => {
  it.each([
    ['PredictionEndpoint network', pe({ network: '' })],
    [
      'PredictionEndpoint network with enablePrivateServiceConnect: true',
      pe({ network: '', enablePrivateServiceConnect: true }),
    ],
    ['PredictionEndpoint description and etag', pe({ description: '', etag: '' })],
    ['DeployedModel id and displayName', dm({ id: '', displayName: '' })],
    [
      'DeployedModel acceleratorType',
      dm({
        automaticResources: undefined,
        dedicatedResources: { machineSpec: { machineType: 'n1-standard-4', acceleratorType: '' }, minReplicaCount: 1 },
      }),
    ],
    ['RegistryEndpoint v1beta1 network', re('v1beta1', { network: '' })],
    ['RegistryEndpoint v1 address', re('v1', { address: '' })],
    ['RegistryEndpoint v1beta1 address', re('v1beta1', { address: '' })],
  ])('%s: accepted', (_what, o) => {
    expect(errors(o)).toEqual([]);
  });

  it('holds for a field added later without code of its own: DeployedModel spec.backend.url (schema-driven)', () => {
    const backend = { service: { name: 'fraud-model', port: 8080 }, protocol: 'KServeV1', modelName: 'fraud' };
    expect(errors(dm({ backend: { ...backend, url: '' } }))).toEqual([]);
    expect(errors(dm({ backend: { ...backend, url: null } }))).toEqual([]);
    const pattern = (
      crdFor(deployedModelKind).spec.versions as {
        schema: {
          openAPIV3Schema: {
            properties: { spec: { properties: Record<string, { properties: Record<string, { pattern?: string }> }> } };
          };
        };
      }[]
    )[0]?.schema.openAPIV3Schema.properties.spec.properties.backend?.properties.url?.pattern;
    expect(new RegExp(pattern ?? 'x', 'u').test('')).toBe(true);
  });

  it('keeps "" in a required field, which is then refused as required', () => {
    expect(errors(pe({ displayName: '' }))).toEqual([
      'spec.displayName: spec.displayName is required and may not be empty',
    ]);
    expect(errors(re('v1', { name: '' }))).toEqual(['spec.name: spec.name is required']);
  });

  it('keeps "" in a map value: an empty label or annotation value is a value', () => {
    expect(
      withoutUnset(z.object({ labels: z.record(z.string(), z.string()).optional() }), { labels: { team: '' } }),
    ).toEqual({ labels: { team: '' } });
  });

  it('keeps "" in an optional field that declares a minimum length (it says "" is no value for it), in the CRD too', () => {
    const schema = z.object({ code: z.string().min(1).optional(), pattern: z.string().regex(/^a+$/).optional() });
    expect(withoutUnset(schema, { code: '', pattern: '' })).toEqual({ code: '' });
    const crd = toStructuralSchema(schema, 'test');
    expect(crd.properties?.code).toMatchObject({ minLength: 1 });
    expect(crd.properties?.pattern?.pattern).toBe('^$|^a+$');
  });

  it('v1beta1 spec.network: "" and absent are the same value for immutability', () => {
    expect(errors(re('v1beta1', { network: '' }), re('v1beta1', {}))).toEqual([]);
    expect(errors(re('v1beta1', {}), re('v1beta1', { network: '' }))).toEqual([]);
    expect(
      errors(re('v1beta1', { network: 'projects/1/locations/global/networks/n' }), re('v1beta1', { network: '' })),
    ).toEqual([expect.stringMatching(/^spec\.network: field is immutable \(was unset\)/)]);
  });

  it('lets "" through the CRD pattern of every optional string field that has one', () => {
    const patterns: string[] = [];
    const visit = (node: Record<string, unknown>, required: readonly string[], name: string): void => {
      if (
        node.type === 'string' &&
        typeof node.pattern === 'string' &&
        !required.includes(name) &&
        node.minLength === undefined
      )
        patterns.push(node.pattern);
      const props = (node.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const [k, child] of Object.entries(props)) visit(child, (node.required as string[] | undefined) ?? [], k);
      if (node.items) visit(node.items as Record<string, unknown>, [], '[]');
    };
    for (const def of [predictionEndpointKind, deployedModelKind, registryEndpointKind]) {
      for (const v of crdFor(def).spec.versions as {
        schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } };
      }[])
        visit(v.schema.openAPIV3Schema.properties.spec, [], 'spec');
    }
    expect(patterns.length).toBeGreaterThan(3);
    for (const p of patterns) expect(new RegExp(p, 'u').test(''), p).toBe(true);
  });
});

describe('null means unset (the apiserver prunes it)', () => {
  it.each([
    ['PredictionEndpoint network', pe({ network: null })],
    [
      'PredictionEndpoint nested fields',
      pe({
        predictRequestResponseLoggingConfig: { enabled: null, samplingRate: null },
        labels: null,
        trafficSplit: null,
      }),
    ],
    [
      'DeployedModel id and resources fields',
      dm({ id: null, automaticResources: { minReplicaCount: null }, dedicatedResources: null }),
    ],
    ['RegistryEndpoint v1 port and address', re('v1', { port: null, address: null, annotations: null })],
    ['RegistryEndpoint v1beta1 port and network', re('v1beta1', { port: null, network: null, metadata: null })],
  ])('%s: accepted', (_what, o) => {
    expect(errors(o)).toEqual([]);
  });

  it('a null required field is missing', () => {
    expect(errors(re('v1', { name: null }))).toEqual(['spec.name: spec.name is required']);
    expect(errors(pe({ displayName: null }))).toEqual(['spec.displayName: spec.displayName is required']);
  });

  it('a null map entry is pruned too, and does not count as a value', () => {
    expect(errors(re('v1', { annotations: { team: null, ok: 'x' } }))).toEqual([]);
  });

  it('does not modify its input, and keeps a __proto__ key as data', () => {
    const spec = JSON.parse('{"network": "", "__proto__": {"x": 1}, "labels": {"__proto__": "v"}}') as Record<
      string,
      unknown
    >;
    const out = withoutUnset(predictionEndpointKind.versions[0]!.spec, spec) as Record<string, unknown>;
    expect(spec.network).toBe('');
    expect(Object.hasOwn(out, 'network')).toBe(false);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
