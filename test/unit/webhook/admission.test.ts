import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { decodeAdmissionReview, MalformedReviewError } from '../../../src/webhook/admission-review.js';
import { reviewAdmission } from '../../../src/webhook/admission.js';
import { admissionReview, widget, widgetKind } from './fixtures.js';

const ctx = { kinds: [widgetKind], options: defaultValidationOptions };

function review(body: Record<string, unknown>) {
  return reviewAdmission(decodeAdmissionReview(body), ctx);
}

describe('reviewAdmission', () => {
  it('allows a valid object and echoes the request uid', () => {
    const out = review(admissionReview({ object: widget({ id: 'a', port: 80 }), uid: 'uid-1' }));
    expect(out.response).toEqual({ uid: 'uid-1', allowed: true });
    expect(out).toMatchObject({ decision: 'allowed', kind: 'Widget', namespace: 'ns1', name: 'w1', causes: 0 });
  });

  it('denies with a 422 Invalid status: one cause per field error, and every path, value and rule in the message', () => {
    const out = review(admissionReview({ object: widget({ port: 70000 }, 'bad-widget') }));
    expect(out.decision).toBe('denied');
    const status = out.response.status;
    expect(status?.code).toBe(422);
    expect(status?.reason).toBe('Invalid');
    expect(status?.message).toBe(
      'Widget "bad-widget" is invalid: spec.id: Required value: spec.id is required; spec.port: Invalid value: 70000: must be between 0 and 65535, inclusive',
    );
    expect(status?.details).toEqual({
      name: 'bad-widget',
      group: 'test.endpoint-operator.dev',
      kind: 'Widget',
      causes: [
        { type: 'FieldValueRequired', field: 'spec.id', message: 'Required value: spec.id is required' },
        {
          type: 'FieldValueInvalid',
          field: 'spec.port',
          message: 'Invalid value: 70000: must be between 0 and 65535, inclusive',
        },
      ],
    });
    expect(out.causes).toBe(2);
  });

  it('returns warnings with an allowed object and with a denied one', () => {
    const allowed = review(admissionReview({ object: widget({ id: 'a', legacy: true }) }));
    expect(allowed.response).toMatchObject({ allowed: true, warnings: ['spec.legacy is deprecated: remove it'] });
    const denied = review(admissionReview({ object: widget({ legacy: true }) }));
    expect(denied.response).toMatchObject({ allowed: false, warnings: ['spec.legacy is deprecated: remove it'] });
  });

  it('passes the old object on UPDATE, so an immutable field change is refused', () => {
    const out = review(
      admissionReview({ operation: 'UPDATE', name: 'w1', object: widget({ id: 'b' }), oldObject: widget({ id: 'a' }) }),
    );
    expect(out.response.allowed).toBe(false);
    expect(out.response.status?.message).toContain('spec.id: Invalid value: "b": field is immutable');
  });

  it('does not pass an old object on CREATE', () => {
    const out = review(
      admissionReview({ operation: 'CREATE', object: widget({ id: 'b' }), oldObject: widget({ id: 'a' }) }),
    );
    expect(out.response.allowed).toBe(true);
  });

  it('lets an object that is being deleted have its finalizers removed', () => {
    const deleting = widget({ port: 70000 }, 'w1', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [] });
    const out = review(
      admissionReview({
        operation: 'UPDATE',
        object: deleting,
        oldObject: {
          ...deleting,
          metadata: { name: 'w1', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x'] },
        },
      }),
    );
    expect(out.response.allowed).toBe(true);
  });

  it('allows DELETE and status subresource requests without validating', () => {
    expect(review(admissionReview({ operation: 'DELETE', object: null, oldObject: widget({}) })).response.allowed).toBe(
      true,
    );
    expect(
      review(admissionReview({ operation: 'UPDATE', subResource: 'status', object: widget({}), oldObject: widget({}) }))
        .response.allowed,
    ).toBe(true);
  });

  it('refuses a kind it does not serve with a message naming what it serves', () => {
    const out = review(
      admissionReview({
        kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
        object: { metadata: { name: 'd' } },
      }),
    );
    expect(out.decision).toBe('unserved');
    expect(out.response.allowed).toBe(false);
    expect(out.response.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(out.response.status?.message).toContain('does not serve apps/v1, Kind=Deployment');
    expect(out.response.status?.message).toContain('Widget.test.endpoint-operator.dev');
  });

  it('refuses an unserved version of a known kind', () => {
    const out = review(
      admissionReview({
        kind: { group: 'test.endpoint-operator.dev', version: 'v9', kind: 'Widget' },
        object: widget({ id: 'a' }),
      }),
    );
    expect(out.decision).toBe('unserved');
  });

  it('reports a validator that throws as an InternalError cause instead of crashing', () => {
    const out = review(admissionReview({ object: widget({ id: 'a', explode: true }) }));
    expect(out.response.allowed).toBe(false);
    expect(out.response.status?.details?.causes).toEqual([
      { type: 'InternalError', field: '', message: 'Internal error: validator failed: boom' },
    ]);
  });

  it('names a generateName object by its prefix', () => {
    const obj = {
      apiVersion: 'test.endpoint-operator.dev/v1',
      kind: 'Widget',
      metadata: { generateName: 'w-' },
      spec: {},
    };
    expect(review(admissionReview({ object: obj })).response.status?.message).toMatch(/^Widget "w-" is invalid/);
  });
});

describe('decodeAdmissionReview', () => {
  const good = admissionReview({ object: widget({ id: 'a' }) });
  const cases: [string, unknown, string][] = [
    ['a non-object', 'hello', '(body)'],
    ['null', null, '(body)'],
    ['the wrong apiVersion', { ...good, apiVersion: 'admission.k8s.io/v1beta1' }, 'apiVersion'],
    ['the wrong kind', { ...good, kind: 'ConversionReview' }, 'kind'],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'request'],
    ['no uid', { ...good, request: { ...(good.request as object), uid: '' } }, 'request.uid'],
    [
      'an unknown operation',
      { ...good, request: { ...(good.request as object), operation: 'PATCH' } },
      'request.operation',
    ],
    [
      'a kind without a version',
      { ...good, request: { ...(good.request as object), kind: { group: 'g', kind: 'K' } } },
      'request.kind.version',
    ],
  ];
  for (const [what, body, path] of cases) {
    it(`rejects ${what}, naming ${path}`, () => {
      expect(() => decodeAdmissionReview(body)).toThrow(MalformedReviewError);
      expect(() => decodeAdmissionReview(body)).toThrow(path);
    });
  }
});

describe('denials of pathological objects', () => {
  it('reports the first 100 errors and counts the rest', () => {
    const manyErrors = {
      ...widgetKind,
      versions: [
        {
          ...widgetKind.versions[0]!,
          validate: () => ({
            errors: Array.from({ length: 250 }, (_, i) => ({
              field: `spec.items[${i}]`,
              type: 'FieldValueInvalid' as const,
              value: i,
              detail: 'bad',
            })),
            warnings: [],
          }),
        },
      ],
    };
    const out = reviewAdmission(decodeAdmissionReview(admissionReview({ object: widget({}) })), {
      kinds: [manyErrors],
      options: defaultValidationOptions,
    });
    const causes = out.response.status?.details?.causes ?? [];
    expect(causes).toHaveLength(101);
    expect(causes[99]?.field).toBe('spec.items[99]');
    expect(causes[100]).toEqual({ type: 'FieldValueTooMany', field: '', message: 'and 150 more errors' });
    expect(out.response.status?.message).toMatch(/spec\.items\[99\]: Invalid value: 99: bad; and 150 more errors$/);
    expect(out.causes).toBe(250);
  });
});
