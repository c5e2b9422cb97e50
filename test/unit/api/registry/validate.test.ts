import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultValidationOptions, type ValidationOptions } from '../../../../src/api/common/kind.js';
import type { ValidationResult } from '../../../../src/api/common/field-error.js';
import {
  validateRegistryEndpointV1,
  validateRegistryEndpointV1beta1,
  validateRegistryServiceV1,
} from '../../../../src/api/registry/index.js';

const SERVICE = 'projects/my-project/locations/us-east1/namespaces/payments/services/checkout';
const ENDPOINT = `${SERVICE}/endpoints/checkout-1`;
const NETWORK = 'projects/123456789/locations/global/networks/default';

type Validate = (obj: unknown, oldObj: unknown, options: ValidationOptions) => ValidationResult;

function object(apiVersion: string, kind: string, spec: unknown): Record<string, unknown> {
  return { apiVersion, kind, metadata: { name: 'x', namespace: 'endpoint-demo' }, spec };
}
const service = (spec: unknown) => object('registry.endpoint-operator.dev/v1', 'RegistryService', spec);
const endpointV1 = (spec: unknown) => object('registry.endpoint-operator.dev/v1', 'RegistryEndpoint', spec);
const endpointV1beta1 = (spec: unknown) => object('registry.endpoint-operator.dev/v1beta1', 'RegistryEndpoint', spec);

function fields(validate: Validate, obj: unknown, oldObj?: unknown): string[] {
  return validate(obj, oldObj, defaultValidationOptions).errors.map((e) => e.field);
}

describe('RegistryService v1', () => {
  it('accepts a valid service', () => {
    expect(
      validateRegistryServiceV1(
        service({ name: SERVICE, annotations: { team: 'payments' } }),
        undefined,
        defaultValidationOptions,
      ),
    ).toEqual({ errors: [], warnings: [] });
  });

  it.each([
    ['no spec', undefined, 'spec'],
    ['spec not an object', 'x', 'spec'],
    ['no name', {}, 'spec.name'],
    ['empty name', { name: '' }, 'spec.name'],
    ['name not a string', { name: 7 }, 'spec.name'],
    ['endpoint name as a service name', { name: ENDPOINT }, 'spec.name'],
    ['annotations not a map', { name: SERVICE, annotations: ['a'] }, 'spec.annotations'],
    ['annotation value not a string', { name: SERVICE, annotations: { team: 3 } }, 'spec.annotations[team]'],
    [
      'bad annotation key',
      { name: SERVICE, annotations: { 'Example.com/team': 'x' } },
      'spec.annotations[Example.com/team]',
    ],
    ['annotations over budget', { name: SERVICE, annotations: { k: 'v'.repeat(512) } }, 'spec.annotations'],
  ])('refuses %s at %s', (_what, spec, field) => {
    expect(fields(validateRegistryServiceV1, service(spec))).toEqual([field]);
  });

  it('refuses a changed name on update, and allows an unchanged one', () => {
    const old = service({ name: SERVICE });
    expect(fields(validateRegistryServiceV1, service({ name: `${SERVICE}x` }), old)).toEqual(['spec.name']);
    expect(fields(validateRegistryServiceV1, service({ name: SERVICE, annotations: { a: 'b' } }), old)).toEqual([]);
  });

  it('warns about reserved keys and accepts them', () => {
    const result = validateRegistryServiceV1(
      service({ name: SERVICE, annotations: { 'endpoint-operator.dev/managed-by': 'gitops' } }),
      undefined,
      defaultValidationOptions,
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([expect.stringContaining('spec.annotations[endpoint-operator.dev/managed-by]')]);
  });
});

describe.each([
  ['v1', validateRegistryEndpointV1, endpointV1, 'annotations'],
  ['v1beta1', validateRegistryEndpointV1beta1, endpointV1beta1, 'metadata'],
] as const)('RegistryEndpoint %s', (_version, validate, make, mapField) => {
  const valid = { name: ENDPOINT, address: '10.0.0.5', port: 8080, [mapField]: { team: 'payments' } };

  it('accepts a valid endpoint, an IPv6 one, and one without address or port', () => {
    expect(validate(make(valid), undefined, defaultValidationOptions)).toEqual({ errors: [], warnings: [] });
    expect(fields(validate, make({ ...valid, address: '2001:db8::5' }))).toEqual([]);
    expect(fields(validate, make({ name: ENDPOINT }))).toEqual([]);
    expect(fields(validate, make({ name: ENDPOINT, address: '', port: 0 }))).toEqual([]);
    expect(fields(validate, make({ name: ENDPOINT, port: 65535 }))).toEqual([]);
  });

  it.each([
    ['no name', { address: '10.0.0.5' }, 'spec.name'],
    ['service name as an endpoint name', { name: SERVICE }, 'spec.name'],
    ['address 8.8.8', { name: ENDPOINT, address: '8.8.8' }, 'spec.address'],
    ['address with a port', { name: ENDPOINT, address: '8.8.8.8:53' }, 'spec.address'],
    ['address test:bad:address', { name: ENDPOINT, address: 'test:bad:address' }, 'spec.address'],
    ['bracketed address', { name: ENDPOINT, address: '[::1]' }, 'spec.address'],
    ['bracketed address with port', { name: ENDPOINT, address: '[::1]:8080' }, 'spec.address'],
    ['address with zone', { name: ENDPOINT, address: 'fe80::1%eth0' }, 'spec.address'],
    ['address with leading zeros', { name: ENDPOINT, address: '10.0.0.05' }, 'spec.address'],
    ['address too long', { name: ENDPOINT, address: '0'.repeat(46) }, 'spec.address'],
    ['address not a string', { name: ENDPOINT, address: 167772165 }, 'spec.address'],
    ['port too big', { name: ENDPOINT, port: 65536 }, 'spec.port'],
    ['negative port', { name: ENDPOINT, port: -1 }, 'spec.port'],
    ['fractional port', { name: ENDPOINT, port: 80.5 }, 'spec.port'],
    ['port as a string', { name: ENDPOINT, port: '80' }, 'spec.port'],
    ['map not a map', { name: ENDPOINT, [mapField]: 'team=payments' }, `spec.${mapField}`],
    ['bad key', { name: ENDPOINT, [mapField]: { 'a/b/c': 'x' } }, `spec.${mapField}[a/b/c]`],
    ['over budget', { name: ENDPOINT, [mapField]: { k: 'v'.repeat(512) } }, `spec.${mapField}`],
  ])('refuses %s at %s', (_what, spec, field) => {
    expect(fields(validate, make(spec))).toEqual([field]);
  });

  it('reports one precise error per bad field, never zod and the parser twice', () => {
    const result = validate(
      make({ name: SERVICE, address: '[::1]:8080', port: 70000 }),
      undefined,
      defaultValidationOptions,
    );
    expect(result.errors.map((e) => [e.field, e.detail])).toEqual([
      ['spec.name', expect.stringMatching(/expected 10/)],
      ['spec.address', expect.stringMatching(/brackets and a port/)],
      ['spec.port', 'must be an integer from 0 to 65535'],
    ]);
  });

  it('refuses a changed name on update', () => {
    expect(fields(validate, make({ ...valid, name: `${ENDPOINT}x` }), make(valid))).toEqual(['spec.name']);
    expect(fields(validate, make({ ...valid, address: '10.0.0.6', port: 9090 }), make(valid))).toEqual([]);
  });

  it('ignores reserved keys in the budget but warns', () => {
    const result = validate(
      make({ name: ENDPOINT, [mapField]: { k: 'v'.repeat(500), 'x.endpoint-operator.io/big': 'v'.repeat(1000) } }),
      undefined,
      defaultValidationOptions,
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([expect.stringContaining(`spec.${mapField}[x.endpoint-operator.io/big]`)]);
  });

  it('never throws and always answers with field errors, whatever the input', () => {
    const anySpec = fc.oneof(
      fc.anything(),
      fc.record(
        {
          name: fc.oneof(fc.constant(ENDPOINT), fc.string(), fc.anything()),
          address: fc.oneof(fc.ipV6(), fc.string(), fc.anything()),
          port: fc.oneof(fc.integer(), fc.double(), fc.anything()),
          [mapField]: fc.oneof(fc.dictionary(fc.string(), fc.string()), fc.anything()),
          network: fc.oneof(fc.constant(NETWORK), fc.string(), fc.anything()),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(
        fc.oneof(anySpec.map(make), fc.anything()),
        fc.oneof(anySpec.map(make), fc.anything()),
        (obj, old) => {
          const result = validate(obj, old, defaultValidationOptions);
          expect(Array.isArray(result.errors) && Array.isArray(result.warnings)).toBe(true);
          for (const e of result.errors) expect(typeof e.field === 'string' && typeof e.detail === 'string').toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('RegistryEndpoint v1beta1 network', () => {
  const base = { name: ENDPOINT, address: '10.0.0.5', port: 80 };

  it('accepts a network in a project given by number', () => {
    expect(fields(validateRegistryEndpointV1beta1, endpointV1beta1({ ...base, network: NETWORK }))).toEqual([]);
  });

  it.each([
    ['a project ID', 'projects/my-project/locations/global/networks/default'],
    ['a regional location', 'projects/123/locations/us-east1/networks/default'],
    ['a bare network name', 'default'],
    ['a number', 42],
  ])('refuses %s at spec.network', (_what, network) => {
    expect(fields(validateRegistryEndpointV1beta1, endpointV1beta1({ ...base, network }))).toEqual(['spec.network']);
  });

  it('is immutable: it cannot be changed, added or removed on update', () => {
    const withNetwork = endpointV1beta1({ ...base, network: NETWORK });
    const without = endpointV1beta1(base);
    expect(
      fields(
        validateRegistryEndpointV1beta1,
        endpointV1beta1({ ...base, network: 'projects/123456789/locations/global/networks/other' }),
        withNetwork,
      ),
    ).toEqual(['spec.network']);
    expect(fields(validateRegistryEndpointV1beta1, without, withNetwork)).toEqual(['spec.network']);
    expect(fields(validateRegistryEndpointV1beta1, withNetwork, without)).toEqual(['spec.network']);
    expect(
      fields(validateRegistryEndpointV1beta1, endpointV1beta1({ ...base, port: 81, network: NETWORK }), withNetwork),
    ).toEqual([]);
  });
});
