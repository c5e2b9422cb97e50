import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../../src/api/common/kind.js';
import {
  CONVERSION_DATA_ANNOTATION,
  REGISTRY_V1,
  REGISTRY_V1BETA1,
  convertRegistryEndpoint,
  validateRegistryEndpointV1,
  validateRegistryEndpointV1beta1,
} from '../../../../src/api/registry/index.js';

const KIND = 'RegistryEndpoint';
const ENDPOINT = 'projects/my-project/locations/us-east1/namespaces/payments/services/checkout/endpoints/checkout-1';
const NETWORK = 'projects/123456789/locations/global/networks/default';

function convert(obj: unknown, to: string): Record<string, unknown> {
  const result = convertRegistryEndpoint(obj, to);
  if (!result.ok) throw new Error(`conversion failed: ${result.message}`);
  return result.object;
}

// Arbitrary valid-shaped objects: any unicode text, empty and missing maps, and conversion
// annotations that are ours, look like ours, or are anything at all.
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const map = fc.dictionary(text, text, { maxKeys: 4 });
const lookalike = fc.oneof(
  text,
  fc.constantFrom(
    '{}',
    '{"spec":{}}',
    '{"previous":"x"}',
    '{"spec":{"network":"n"}}',
    '{"status":{"createTime":"t"}}',
    '{"created":"metadata"}',
    'null',
    '[]',
    '{"spec":{"network":"n"},"previous":"{\\"spec\\":{\\"network\\":\\"m\\"}}"}',
  ),
  fc
    .record({ spec: fc.record({ network: text }, { requiredKeys: [] }), previous: text }, { requiredKeys: [] })
    .map((o) => JSON.stringify(o)),
);
const objectAnnotations = fc.oneof(
  map,
  fc.tuple(map, lookalike).map(([m, v]) => ({ ...m, [CONVERSION_DATA_ANNOTATION]: v })),
);
const metadata = fc.record(
  {
    name: text,
    namespace: text,
    uid: text,
    resourceVersion: text,
    generation: fc.nat(),
    labels: map,
    annotations: objectAnnotations,
  },
  { requiredKeys: [] },
);
const conditions = fc.array(
  fc.record(
    {
      type: text,
      status: fc.constantFrom('True', 'False', 'Unknown'),
      observedGeneration: fc.nat(),
      lastTransitionTime: text,
      reason: text,
      message: text,
    },
    { requiredKeys: ['type', 'status'] },
  ),
  { maxLength: 2 },
);
const common = { name: text, address: fc.oneof(fc.ipV4(), fc.ipV6(), text), port: fc.integer({ min: 0, max: 65535 }) };

const v1beta1 = fc.record(
  {
    apiVersion: fc.constant(REGISTRY_V1BETA1),
    kind: fc.constant(KIND),
    metadata,
    spec: fc.record({ ...common, metadata: map, network: text }, { requiredKeys: [] }),
    status: fc.record(
      { effectiveMetadata: map, createTime: text, updateTime: text, observedGeneration: fc.nat(), conditions },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['apiVersion', 'kind', 'spec'] },
);
const v1 = fc.record(
  {
    apiVersion: fc.constant(REGISTRY_V1),
    kind: fc.constant(KIND),
    metadata,
    spec: fc.record({ ...common, annotations: map }, { requiredKeys: [] }),
    status: fc.record({ effectiveAnnotations: map, observedGeneration: fc.nat(), conditions }, { requiredKeys: [] }),
  },
  { requiredKeys: ['apiVersion', 'kind', 'spec'] },
);

function dataOf(obj: Record<string, unknown>): string | undefined {
  const annotations = (obj.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
  const value = annotations?.[CONVERSION_DATA_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
}

/** What a ConversionReview carries: plain JSON (fast-check also builds null-prototype objects). */
function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

describe('convertRegistryEndpoint', () => {
  it('renames metadata to annotations, carries status times directly and keeps spec.network in the conversion annotation', () => {
    const beta = {
      apiVersion: REGISTRY_V1BETA1,
      kind: KIND,
      metadata: { name: 'checkout-1', namespace: 'endpoint-demo' },
      spec: { name: ENDPOINT, address: '10.0.0.5', port: 8080, metadata: { team: 'payments' }, network: NETWORK },
      status: { effectiveMetadata: { team: 'payments' }, createTime: '2026-01-01T00:00:00Z', observedGeneration: 1 },
    };
    const hub = convert(beta, REGISTRY_V1);
    expect(hub).toEqual({
      apiVersion: REGISTRY_V1,
      kind: KIND,
      metadata: {
        name: 'checkout-1',
        namespace: 'endpoint-demo',
        annotations: {
          [CONVERSION_DATA_ANNOTATION]: JSON.stringify({ spec: { network: NETWORK }, created: 'annotations' }),
        },
      },
      spec: { name: ENDPOINT, address: '10.0.0.5', port: 8080, annotations: { team: 'payments' } },
      status: { effectiveAnnotations: { team: 'payments' }, createTime: '2026-01-01T00:00:00Z', observedGeneration: 1 },
    });
    expect(convert(hub, REGISTRY_V1BETA1)).toEqual(beta);
  });

  it('invents nothing: without v1beta1-only data no annotation appears, and no field is added', () => {
    const beta = { apiVersion: REGISTRY_V1BETA1, kind: KIND, metadata: { name: 'a' }, spec: { name: ENDPOINT } };
    expect(convert(beta, REGISTRY_V1)).toEqual({
      apiVersion: REGISTRY_V1,
      kind: KIND,
      metadata: { name: 'a' },
      spec: { name: ENDPOINT },
    });
    const hub = { apiVersion: REGISTRY_V1, kind: KIND, spec: { name: ENDPOINT, annotations: {} } };
    expect(convert(hub, REGISTRY_V1BETA1)).toEqual({
      apiVersion: REGISTRY_V1BETA1,
      kind: KIND,
      spec: { name: ENDPOINT, metadata: {} },
    });
  });

  it('keeps a foreign value under the annotation key and puts it back', () => {
    const beta = {
      apiVersion: REGISTRY_V1BETA1,
      kind: KIND,
      metadata: { annotations: { [CONVERSION_DATA_ANNOTATION]: '{"spec":{"network":"x"}}' } },
      spec: { name: ENDPOINT, network: NETWORK },
    };
    const hub = convert(beta, REGISTRY_V1);
    expect(
      JSON.parse((hub.metadata as { annotations: Record<string, string> }).annotations[CONVERSION_DATA_ANNOTATION]!),
    ).toEqual({ spec: { network: NETWORK }, previous: '{"spec":{"network":"x"}}' });
    expect(convert(hub, REGISTRY_V1BETA1)).toEqual(beta);
  });

  it('returns an unchanged copy when the object is already at the desired version', () => {
    const hub = {
      apiVersion: REGISTRY_V1,
      kind: KIND,
      metadata: { annotations: { [CONVERSION_DATA_ANNOTATION]: '{"spec":{"network":"n"}}' } },
      spec: { name: ENDPOINT },
    };
    const result = convert(hub, REGISTRY_V1);
    expect(result).toEqual(hub);
    expect(result).not.toBe(hub);
  });

  it.each([
    [
      'an unknown target version',
      { apiVersion: REGISTRY_V1, kind: KIND, spec: {} },
      'registry.endpoint-operator.dev/v2',
      /supported versions/,
    ],
    ['a non-object', 'x', REGISTRY_V1, /must be a JSON object/],
    [
      'another kind',
      { apiVersion: REGISTRY_V1, kind: 'RegistryService', spec: {} },
      REGISTRY_V1BETA1,
      /expected kind RegistryEndpoint/,
    ],
    ['an unknown source version', { apiVersion: 'v1', kind: KIND, spec: {} }, REGISTRY_V1, /from apiVersion "v1"/],
    [
      'both metadata and annotations in spec',
      { apiVersion: REGISTRY_V1BETA1, kind: KIND, spec: { metadata: {}, annotations: {} } },
      REGISTRY_V1,
      /both metadata and annotations/,
    ],
    [
      'annotations that are not a map',
      { apiVersion: REGISTRY_V1BETA1, kind: KIND, metadata: { annotations: 'x' }, spec: { network: 'n' } },
      REGISTRY_V1,
      /metadata.annotations must be a map/,
    ],
  ])('refuses %s with a message', (_what, obj, to, message) => {
    const result = convertRegistryEndpoint(obj, to);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });

  it('v1beta1 → v1 → v1beta1 is the identity', () => {
    let stashed = 0;
    let displaced = 0;
    fc.assert(
      fc.property(v1beta1.map(asJson), (beta) => {
        const hub = convert(beta, REGISTRY_V1);
        expect(hub.apiVersion).toBe(REGISTRY_V1);
        const kept = dataOf(hub);
        if (kept?.includes('"previous"')) displaced++;
        else if (kept !== undefined) stashed++;
        expect(convert(hub, REGISTRY_V1BETA1)).toStrictEqual(beta);
      }),
      { numRuns: 2000 },
    );
    // The interesting paths were taken, not only the plain renames.
    expect(stashed).toBeGreaterThan(200);
    expect(displaced).toBeGreaterThan(20);
  });

  it('v1 → v1beta1 → v1 is the identity', () => {
    let restored = 0;
    let foreign = 0;
    fc.assert(
      fc.property(v1.map(asJson), (hub) => {
        const beta = convert(hub, REGISTRY_V1BETA1);
        expect(beta.apiVersion).toBe(REGISTRY_V1BETA1);
        if (dataOf(hub) !== undefined) {
          if (dataOf(beta) === dataOf(hub)) foreign++;
          else restored++;
        }
        expect(convert(beta, REGISTRY_V1)).toStrictEqual(hub);
      }),
      { numRuns: 2000 },
    );
    expect(restored).toBeGreaterThan(20);
    expect(foreign).toBeGreaterThan(20);
  });

  it('keeps conditions (with their observedGeneration), status.observedGeneration and metadata.generation unchanged, both ways', () => {
    const generations = (o: Record<string, unknown>) => {
      const status = o.status as { observedGeneration?: unknown; conditions?: unknown } | undefined;
      return {
        generation: (o.metadata as { generation?: unknown } | undefined)?.generation,
        observed: status?.observedGeneration,
        conditions: status?.conditions,
      };
    };
    let withConditions = 0;
    fc.assert(
      fc.property(fc.oneof(v1beta1, v1).map(asJson), (obj) => {
        const to = obj.apiVersion === REGISTRY_V1 ? REGISTRY_V1BETA1 : REGISTRY_V1;
        if (Array.isArray(generations(obj).conditions) && (generations(obj).conditions as unknown[]).length > 0)
          withConditions++;
        expect(generations(convert(obj, to))).toStrictEqual(generations(obj));
      }),
      { numRuns: 1000 },
    );
    expect(withConditions).toBeGreaterThan(100);
  });

  it('turns a valid v1beta1 endpoint into a valid v1 one and back', () => {
    const validBeta = fc.record(
      {
        apiVersion: fc.constant(REGISTRY_V1BETA1),
        kind: fc.constant(KIND),
        metadata: fc.constant({ name: 'e', namespace: 'endpoint-demo' }),
        spec: fc.record(
          {
            name: fc.constant(ENDPOINT),
            address: fc.oneof(fc.ipV4(), fc.ipV6()),
            port: fc.integer({ min: 0, max: 65535 }),
            metadata: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), text, { maxKeys: 3 }),
            network: fc.constant(NETWORK),
          },
          { requiredKeys: ['name'] },
        ),
      },
      { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'] },
    );
    fc.assert(
      fc.property(validBeta, (beta) => {
        expect(validateRegistryEndpointV1beta1(beta, undefined, defaultValidationOptions).errors).toEqual([]);
        const hub = convert(beta, REGISTRY_V1);
        expect(validateRegistryEndpointV1(hub, undefined, defaultValidationOptions).errors).toEqual([]);
        expect(
          validateRegistryEndpointV1beta1(convert(hub, REGISTRY_V1BETA1), beta, defaultValidationOptions).errors,
        ).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), v1, v1beta1),
        fc.constantFrom(REGISTRY_V1, REGISTRY_V1BETA1, 'x'),
        (obj, to) => {
          const result = convertRegistryEndpoint(obj, to);
          expect(typeof result.ok).toBe('boolean');
        },
      ),
      { numRuns: 1000 },
    );
  });
});
