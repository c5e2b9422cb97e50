import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { allKinds } from '../../../src/api/kinds.js';
import { decodeAdmissionReview } from '../../../src/webhook/admission-review.js';
import { reviewAdmission } from '../../../src/webhook/admission.js';
import { decodeConversionReview, reviewConversion } from '../../../src/webhook/conversion.js';
import { converters } from '../../../src/webhook/converters.js';
import { admissionReview } from './fixtures.js';

/** The webhook wired to the project's real kinds and converters, as `endpoint-operator run` serves them. */
const ctx = { kinds: allKinds, options: defaultValidationOptions };
const PE = { group: 'prediction.endpoint-operator.dev', version: 'v1', kind: 'PredictionEndpoint' };
const RE1 = { group: 'registry.endpoint-operator.dev', version: 'v1', kind: 'RegistryEndpoint' };
const RE1B = { group: 'registry.endpoint-operator.dev', version: 'v1beta1', kind: 'RegistryEndpoint' };

function endpoint(spec: Record<string, unknown>, status?: Record<string, unknown>) {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'pe', namespace: 'ns1' },
    spec,
    ...(status ? { status } : {}),
  };
}

function registryEndpoint(version: 'v1' | 'v1beta1', spec: Record<string, unknown>) {
  return {
    apiVersion: `registry.endpoint-operator.dev/${version}`,
    kind: 'RegistryEndpoint',
    metadata: { name: 're', namespace: 'ns1' },
    spec,
  };
}

const review = (body: Record<string, unknown>) => reviewAdmission(decodeAdmissionReview(body), ctx);
const endpointName = 'projects/payments-prod/locations/us-east1/namespaces/ns/services/svc/endpoints/ep';

describe('admission with the real kinds', () => {
  it('refuses an UPDATE whose spec.etag is stale', () => {
    const old = endpoint({ displayName: 'a', etag: 'e1' }, { etag: 'e2' });
    const out = review(
      admissionReview({
        kind: PE,
        operation: 'UPDATE',
        name: 'pe',
        object: endpoint({ displayName: 'b', etag: 'e1' }, { etag: 'e2' }),
        oldObject: old,
      }),
    );
    expect(out.response.allowed).toBe(false);
    expect(out.response.status?.details?.causes.map((c) => c.field)).toEqual(['spec.etag']);
    expect(out.response.status?.message).toContain('spec.etag: Invalid value: "e1"');
    const fresh = review(
      admissionReview({
        kind: PE,
        operation: 'UPDATE',
        name: 'pe',
        object: endpoint({ displayName: 'b', etag: 'e2' }, { etag: 'e2' }),
        oldObject: old,
      }),
    );
    expect(fresh.response.allowed).toBe(true);
  });

  it('warns that enablePrivateServiceConnect is deprecated', () => {
    const out = review(
      admissionReview({ kind: PE, object: endpoint({ displayName: 'a', enablePrivateServiceConnect: true }) }),
    );
    expect(out.response.allowed).toBe(true);
    expect(out.response.warnings?.join('\n')).toContain('enablePrivateServiceConnect is deprecated');
  });

  it('refuses a change of the immutable RegistryEndpoint spec.name', () => {
    const out = review(
      admissionReview({
        kind: RE1,
        operation: 'UPDATE',
        name: 're',
        object: registryEndpoint('v1', { name: `${endpointName}2` }),
        oldObject: registryEndpoint('v1', { name: endpointName }),
      }),
    );
    expect(out.response.allowed).toBe(false);
    expect(out.response.status?.message).toContain('spec.name');
  });

  it('warns about reserved annotation prefixes, and validates v1beta1 with its own field names', () => {
    const ok = review(
      admissionReview({
        kind: RE1,
        object: registryEndpoint('v1', {
          name: endpointName,
          address: '10.0.0.1',
          port: 80,
          annotations: { 'endpoint-operator.dev/owner': 'x' },
        }),
      }),
    );
    expect(ok.response.allowed).toBe(true);
    expect(ok.response.warnings?.join('\n')).toContain('endpoint-operator.dev/owner');
    const bad = review(
      admissionReview({
        kind: RE1B,
        object: registryEndpoint('v1beta1', {
          name: endpointName,
          address: '8.8.8.8:53',
          metadata: { 'bad key!': 'x' },
        }),
      }),
    );
    expect(bad.response.allowed).toBe(false);
    const fields = bad.response.status?.details?.causes.map((c) => c.field) ?? [];
    expect(fields).toContain('spec.address');
    expect(fields.some((f) => f.startsWith('spec.metadata['))).toBe(true);
  });
});

describe('conversion with the real converters', () => {
  const convert = (objects: unknown[], desiredAPIVersion: string) =>
    reviewConversion(
      decodeConversionReview({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u', desiredAPIVersion, objects },
      }),
      converters,
    ).response;

  it('serves v1beta1 metadata/network as v1 annotations, and converts back unchanged', () => {
    const beta = registryEndpoint('v1beta1', {
      name: endpointName,
      address: '10.0.0.1',
      port: 8080,
      metadata: { team: 'payments' },
      network: 'projects/123/locations/global/networks/default',
    });
    const toV1 = convert([beta], 'registry.endpoint-operator.dev/v1');
    expect(toV1.result).toEqual({ status: 'Success' });
    const v1 = toV1.convertedObjects[0] as { apiVersion: string; spec: Record<string, unknown> };
    expect(v1.apiVersion).toBe('registry.endpoint-operator.dev/v1');
    expect(v1.spec.annotations).toEqual({ team: 'payments' });
    expect(v1.spec.metadata).toBeUndefined();
    const back = convert([v1], 'registry.endpoint-operator.dev/v1beta1');
    expect(back.convertedObjects).toEqual([beta]);
  });

  it('reports an object of an unknown version as a Failure', () => {
    const out = convert(
      [{ ...registryEndpoint('v1', {}), apiVersion: 'registry.endpoint-operator.dev/v2' }],
      'registry.endpoint-operator.dev/v1',
    );
    expect(out.result.status).toBe('Failure');
  });
});
