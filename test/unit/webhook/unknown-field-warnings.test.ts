import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { allKinds } from '../../../src/api/kinds.js';
import { decodeAdmissionReview } from '../../../src/webhook/admission-review.js';
import { reviewAdmission } from '../../../src/webhook/admission.js';
import { LAST_APPLIED_ANNOTATION } from '../../../src/webhook/admission-unknown-fields.js';
import { admissionReview } from './fixtures.js';

const ctx = { kinds: allKinds, options: defaultValidationOptions };
const RE1 = { group: 'registry.endpoint-operator.dev', version: 'v1', kind: 'RegistryEndpoint' };
const name = 'projects/payments-prod/locations/us-east1/namespaces/ns/services/svc/endpoints/ep';

/** What the apiserver hands the webhook: the pruned object, with the manifest as applied in the annotation. */
function applied(
  manifestSpec: Record<string, unknown>,
  version = 'v1',
  prunedSpec: Record<string, unknown> = { name },
) {
  const manifest = {
    apiVersion: `registry.endpoint-operator.dev/${version}`,
    kind: 'RegistryEndpoint',
    metadata: { name: 're', namespace: 'ns1' },
    spec: manifestSpec,
  };
  return {
    apiVersion: 'registry.endpoint-operator.dev/v1',
    kind: 'RegistryEndpoint',
    metadata: { name: 're', namespace: 'ns1', annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(manifest) } },
    spec: prunedSpec,
  };
}

const review = (body: Record<string, unknown>) => reviewAdmission(decodeAdmissionReview(body), ctx);

describe('admission warnings for fields the version does not have', () => {
  it('names a typo from the applied manifest, with the field it probably meant, and still allows the object', () => {
    const out = review(admissionReview({ kind: RE1, object: applied({ name, adress: '10.0.0.1' }) }));
    expect(out.response.allowed).toBe(true);
    expect(out.response.warnings).toEqual([
      expect.stringMatching(/^spec\.adress: unknown field: .*drops \(prunes\) it.*did you mean spec\.address\?$/),
    ]);
  });

  it('names v1 spec.network and v1 spec.metadata with what to do instead, and v1beta1 spec.annotations', () => {
    const v1 = review(
      admissionReview({
        kind: RE1,
        object: applied({ name, network: 'projects/1/locations/global/networks/n', metadata: { a: 'b' } }),
      }),
    );
    expect(v1.response.warnings).toEqual([
      expect.stringMatching(/^spec\.network: .*only registry\.endpoint-operator\.dev\/v1beta1 has spec\.network/),
      expect.stringMatching(/^spec\.metadata: .*v1 calls it spec\.annotations/),
    ]);
    // The manifest was v1beta1: it is checked against v1beta1, whichever version the review is in.
    const beta = review(admissionReview({ kind: RE1, object: applied({ name, annotations: { a: 'b' } }, 'v1beta1') }));
    expect(beta.response.warnings).toEqual([
      expect.stringMatching(/^spec\.annotations: .*v1beta1 calls it spec\.metadata/),
    ]);
  });

  it('adds the warnings to a denial too', () => {
    const out = review(
      admissionReview({ kind: RE1, object: applied({ name, adress: 'x', port: 70000 }, 'v1', { name, port: 70000 }) }),
    );
    expect(out.response.allowed).toBe(false);
    expect(out.response.warnings).toEqual([expect.stringMatching(/^spec\.adress: /)]);
  });

  it('says nothing when the manifest has no unknown field, has no annotation, or was already applied unchanged (an operator update)', () => {
    expect(
      review(admissionReview({ kind: RE1, object: applied({ name, address: '10.0.0.1' }) })).response.warnings,
    ).toBeUndefined();
    const bare = {
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryEndpoint',
      metadata: { name: 're' },
      spec: { name },
    };
    expect(review(admissionReview({ kind: RE1, object: bare })).response.warnings).toBeUndefined();
    const same = applied({ name, adress: 'x' });
    expect(
      review(admissionReview({ kind: RE1, operation: 'UPDATE', name: 're', object: same, oldObject: same })).response
        .warnings,
    ).toBeUndefined();
    const changed = review(
      admissionReview({
        kind: RE1,
        operation: 'UPDATE',
        name: 're',
        object: applied({ name, adress: 'y' }),
        oldObject: same,
      }),
    );
    expect(changed.response.warnings).toHaveLength(1);
  });

  it('ignores an annotation that is not JSON, names another kind, or an unserved version', () => {
    const broken = {
      ...applied({ name }),
      metadata: { name: 're', annotations: { [LAST_APPLIED_ANNOTATION]: '{not json' } },
    };
    expect(review(admissionReview({ kind: RE1, object: broken })).response).toMatchObject({ allowed: true });
    const otherKind = {
      ...applied({ name }),
      metadata: {
        name: 're',
        annotations: {
          [LAST_APPLIED_ANNOTATION]: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { x: 'y' } }),
        },
      },
    };
    expect(review(admissionReview({ kind: RE1, object: otherKind })).response.warnings).toBeUndefined();
    expect(
      review(admissionReview({ kind: RE1, object: applied({ name, adress: 'x' }, 'v2') })).response.warnings,
    ).toBeUndefined();
  });

  it('caps the number of warnings', () => {
    const typos = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`typo${i}`, i]));
    const out = review(admissionReview({ kind: RE1, object: applied({ name, ...typos }) }));
    expect(out.response.warnings).toHaveLength(21);
    expect(out.response.warnings?.[20]).toBe('and 30 more unknown fields');
  });
});
