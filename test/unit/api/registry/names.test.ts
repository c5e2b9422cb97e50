import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ENDPOINT_NAME_PATTERN,
  MAX_ENDPOINT_NAME_LENGTH,
  MAX_NETWORK_NAME_LENGTH,
  MAX_SERVICE_NAME_LENGTH,
  NETWORK_NAME_PATTERN,
  SERVICE_NAME_PATTERN,
  endpointNameProblem,
  networkNameProblem,
  parentServiceName,
  serviceNameProblem,
} from '../../../../src/api/registry/names.js';

const SERVICE = 'projects/my-project/locations/us-east1/namespaces/payments/services/checkout';
const ENDPOINT = `${SERVICE}/endpoints/checkout-1`;

describe('service and endpoint names', () => {
  it('accepts Service Directory names with a project ID or number', () => {
    expect(serviceNameProblem(SERVICE)).toBeUndefined();
    expect(serviceNameProblem('projects/123456789012/locations/global/namespaces/n/services/s')).toBeUndefined();
    expect(endpointNameProblem(ENDPOINT)).toBeUndefined();
  });

  it.each([
    ['', /found 1 '\/'-separated segments, expected 8/],
    [`${SERVICE}/`, /found 9/],
    [
      'project/my-project/locations/us-east1/namespaces/payments/services/checkout',
      /segment 1 must be "projects", not "project"/,
    ],
    ['projects/my-project/regions/us-east1/namespaces/payments/services/checkout', /segment 3 must be "locations"/],
    [
      'projects/My-Project/locations/us-east1/namespaces/payments/services/checkout',
      /the projects id "My-Project" must be a project ID/,
    ],
    ['projects/proj/locations/us-east1/namespaces/payments/services/checkout', /projects id "proj"/],
    ['projects/0123/locations/us-east1/namespaces/payments/services/checkout', /projects id "0123"/],
    [
      'projects/my-project/locations/us-east1/namespaces/1payments/services/checkout',
      /namespaces id "1payments" must be 1-63 characters/,
    ],
    ['projects/my-project/locations/us-east1/namespaces/payments/services/checkout-', /services id "checkout-"/],
    [`projects/my-project/locations/us-east1/namespaces/payments/services/${'a'.repeat(64)}`, /services id/],
    ['projects/my-project/locations/us-east1/namespaces/payments/services/check_out', /services id/],
  ])('refuses service name %s', (name, reason) => {
    expect(serviceNameProblem(name)).toMatch(reason);
  });

  it('refuses a service name as an endpoint name and the reverse', () => {
    expect(endpointNameProblem(SERVICE)).toMatch(/expected 10/);
    expect(serviceNameProblem(ENDPOINT)).toMatch(/expected 8/);
    expect(endpointNameProblem(`${SERVICE}/endpoint/x`)).toMatch(/segment 9 must be "endpoints"/);
  });

  it('has CRD patterns and length limits that agree with the checks', () => {
    const id = fc.stringMatching(/^[a-z][-a-z0-9]{3,8}[a-z0-9]$/);
    const messy = fc.constantFrom(
      '',
      'A',
      '-a',
      'a-',
      '1a',
      'a_b',
      'a'.repeat(64),
      'a'.repeat(63),
      'my-project',
      '0',
      '7',
      '012',
      'a/b',
      'global',
    );
    const segment = fc.oneof(
      { weight: 12, arbitrary: id },
      { weight: 1, arbitrary: messy },
      { weight: 1, arbitrary: fc.stringMatching(/^[1-9][0-9]{0,20}$/) },
    );
    const label = fc.oneof(
      { weight: 20, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom('project', 'location', 'services', 'x') },
    );
    const collections = ['projects', 'locations', 'namespaces', 'services', 'endpoints'];
    const name = fc
      .tuple(fc.array(fc.tuple(label, segment), { minLength: 3, maxLength: 6 }))
      .map(([parts]) => parts.map(([l, s], i) => `${l ?? collections[i] ?? 'extra'}/${s}`).join('/'));
    let accepted = 0;
    fc.assert(
      fc.property(name, (n) => {
        expect(SERVICE_NAME_PATTERN.test(n) && n.length <= MAX_SERVICE_NAME_LENGTH, n).toBe(
          serviceNameProblem(n) === undefined,
        );
        expect(ENDPOINT_NAME_PATTERN.test(n) && n.length <= MAX_ENDPOINT_NAME_LENGTH, n).toBe(
          endpointNameProblem(n) === undefined,
        );
        if (serviceNameProblem(n) === undefined || endpointNameProblem(n) === undefined) accepted++;
      }),
      { numRuns: 3000 },
    );
    // Both outcomes must be exercised, or the agreement above proves nothing.
    expect(accepted).toBeGreaterThan(50);
    expect(accepted).toBeLessThan(2950);
  });

  it('computes the longest possible names as the length limits', () => {
    const longest = `projects/${'p'.repeat(30)}/locations/${'l'.repeat(63)}/namespaces/${'n'.repeat(63)}/services/${'s'.repeat(63)}`;
    expect(serviceNameProblem(longest)).toBeUndefined();
    expect(longest.length).toBe(MAX_SERVICE_NAME_LENGTH);
    expect(`${longest}/endpoints/${'e'.repeat(63)}`.length).toBe(MAX_ENDPOINT_NAME_LENGTH);
    expect(`projects/${'9'.repeat(19)}/locations/global/networks/${'n'.repeat(63)}`.length).toBe(
      MAX_NETWORK_NAME_LENGTH,
    );
  });
});

describe('parentServiceName', () => {
  it('strips /endpoints/{endpoint}', () => {
    expect(parentServiceName(ENDPOINT)).toBe(SERVICE);
  });

  it('is undefined for anything that is not an endpoint name', () => {
    expect(parentServiceName(SERVICE)).toBeUndefined();
    expect(parentServiceName('')).toBeUndefined();
    expect(parentServiceName(`${SERVICE}/endpoints/Bad`)).toBeUndefined();
  });
});

describe('networkNameProblem', () => {
  it('accepts a network in a project given by number', () => {
    expect(networkNameProblem('projects/123456789/locations/global/networks/default')).toBeUndefined();
    expect(NETWORK_NAME_PATTERN.test('projects/123456789/locations/global/networks/default')).toBe(true);
  });

  it.each([
    ['projects/my-project/locations/global/networks/default', /by its number, not its ID "my-project"/],
    ['projects/0123/locations/global/networks/default', /project number "0123" has a leading zero/],
    ['projects/123/locations/us-east1/networks/default', /location must be "global"/],
    ['projects/123/locations/global/networks/Default', /network name "Default"/],
    ['projects/123/global/networks/default', /must have the form/],
    ['default', /must have the form/],
  ])('refuses %s', (network, reason) => {
    expect(networkNameProblem(network)).toMatch(reason);
    expect(NETWORK_NAME_PATTERN.test(network)).toBe(false);
  });
});
