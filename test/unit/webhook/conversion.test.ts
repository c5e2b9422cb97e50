import { describe, expect, it } from 'vitest';
import { MalformedReviewError } from '../../../src/webhook/admission-review.js';
import { decodeConversionReview, reviewConversion } from '../../../src/webhook/conversion.js';
import type { ConverterTable } from '../../../src/webhook/converters.js';

/** v1 `size` ↔ v2 `replicas`, refusing negative values: enough to see ordering, failure and errors. */
const table: ConverterTable = {
  'test.endpoint-operator.dev/Widget': (obj, desired) => {
    const o = obj as { apiVersion: string; spec: Record<string, number> };
    const { size, replicas, ...rest } = o.spec;
    const n = size ?? replicas ?? 0;
    if (n < 0) return { ok: false, message: `spec: ${n} cannot be converted` };
    if (n === 13) throw new Error('unlucky');
    return {
      ok: true,
      object: {
        ...o,
        apiVersion: desired,
        spec: desired.endsWith('/v2') ? { ...rest, replicas: n } : { ...rest, size: n },
      },
    };
  },
};

function request(objects: unknown[], desiredAPIVersion = 'test.endpoint-operator.dev/v2') {
  return decodeConversionReview({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'r1', desiredAPIVersion, objects },
  });
}

const w = (n: number, name = 'w') => ({
  apiVersion: 'test.endpoint-operator.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns' },
  spec: { size: n },
});

describe('reviewConversion', () => {
  it('converts every object, in order', () => {
    const out = reviewConversion(request([w(1, 'a'), w(2, 'b')]), table);
    expect(out.kind).toBe('test.endpoint-operator.dev/Widget');
    expect(out.response).toEqual({
      uid: 'r1',
      result: { status: 'Success' },
      convertedObjects: [
        {
          apiVersion: 'test.endpoint-operator.dev/v2',
          kind: 'Widget',
          metadata: { name: 'a', namespace: 'ns' },
          spec: { replicas: 1 },
        },
        {
          apiVersion: 'test.endpoint-operator.dev/v2',
          kind: 'Widget',
          metadata: { name: 'b', namespace: 'ns' },
          spec: { replicas: 2 },
        },
      ],
    });
  });

  it('converts an empty list', () => {
    expect(reviewConversion(request([]), table).response).toEqual({
      uid: 'r1',
      result: { status: 'Success' },
      convertedObjects: [],
    });
  });

  it('fails the whole review when one object cannot be converted, naming it', () => {
    const out = reviewConversion(request([w(1), w(-1, 'neg')]), table);
    expect(out.response).toEqual({
      uid: 'r1',
      result: { status: 'Failure', message: 'objects[1] (Widget ns/neg): spec: -1 cannot be converted' },
      convertedObjects: [],
    });
  });

  it('reports a converter that throws as a Failure', () => {
    expect(reviewConversion(request([w(13)]), table).response.result).toEqual({
      status: 'Failure',
      message: 'objects[0] (Widget ns/w): converter failed: unlucky',
    });
  });

  it('fails on a kind without a converter, naming the kinds it converts', () => {
    const out = reviewConversion(
      request([{ apiVersion: 'test.endpoint-operator.dev/v1', kind: 'Gadget', metadata: {} }]),
      table,
    );
    expect(out.response.result).toEqual({
      status: 'Failure',
      message:
        'objects[0]: no conversion is defined for test.endpoint-operator.dev/Gadget; this webhook converts test.endpoint-operator.dev/Widget',
    });
  });

  it('fails on an object that is not a typed object, or a change of group', () => {
    expect(reviewConversion(request(['x']), table).response.result).toMatchObject({
      status: 'Failure',
      message: 'objects[0]: must be an object with string apiVersion and kind',
    });
    expect(reviewConversion(request([w(1)], 'other.dev/v2'), table).response.result).toMatchObject({
      status: 'Failure',
      message: expect.stringContaining('never changes the API group') as string,
    });
  });
});

describe('decodeConversionReview', () => {
  it.each([
    [
      'a v1beta1 review',
      {
        apiVersion: 'apiextensions.k8s.io/v1beta1',
        kind: 'ConversionReview',
        request: { uid: 'u', desiredAPIVersion: 'a/v1', objects: [] },
      },
      'apiVersion',
    ],
    [
      'no uid',
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { desiredAPIVersion: 'a/v1', objects: [] },
      },
      'request.uid',
    ],
    [
      'a desiredAPIVersion without a group',
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u', desiredAPIVersion: 'v1', objects: [] },
      },
      'request.desiredAPIVersion',
    ],
    [
      'objects that are not a list',
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u', desiredAPIVersion: 'a/v1', objects: {} },
      },
      'request.objects',
    ],
  ])('rejects %s', (_what, body, path) => {
    expect(() => decodeConversionReview(body)).toThrow(MalformedReviewError);
    expect(() => decodeConversionReview(body)).toThrow(path);
  });
});
