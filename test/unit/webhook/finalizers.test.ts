import { describe, expect, it } from 'vitest';
import { allKinds } from '../../../src/api/kinds.js';
import type { AdmissionRequest } from '../../../src/webhook/admission-review.js';
import { finalizedKinds, reviewFinalizers } from '../../../src/webhook/finalizers.js';

const FINALIZER = 'prediction.endpoint-operator.dev/finalizer';

function review(kind: string, object: unknown, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  const group = kind.startsWith('Registry') ? 'registry.endpoint-operator.dev' : 'prediction.endpoint-operator.dev';
  return {
    uid: 'u-1',
    kind: { group, version: 'v1', kind },
    namespace: 'ml',
    operation: 'CREATE',
    object,
    ...overrides,
  };
}

/** Applies the RFC 6902 `add` operations the webhook emits (the only op it uses) to a copy of `obj`. */
function applyPatch(obj: Record<string, unknown>, patchB64: string): Record<string, unknown> {
  const copy = structuredClone(obj);
  for (const op of JSON.parse(Buffer.from(patchB64, 'base64').toString('utf8')) as {
    op: string;
    path: string;
    value: unknown;
  }[]) {
    expect(op.op).toBe('add');
    const segments = op.path.split('/').slice(1);
    const last = segments.pop()!;
    let target: Record<string, unknown> | unknown[] = copy;
    for (const s of segments) target = (target as Record<string, unknown>)[s] as Record<string, unknown>;
    if (Array.isArray(target) && last === '-') target.push(op.value);
    else (target as Record<string, unknown>)[last] = op.value;
  }
  return copy;
}

describe('reviewFinalizers', () => {
  it('finalizes exactly the prediction kinds', () => {
    expect(
      finalizedKinds(allKinds)
        .map((k) => k.kind)
        .sort(),
    ).toEqual(['DeployedModel', 'PredictionEndpoint']);
  });

  it('adds the finalizer list to a new DeployedModel that has none', () => {
    const object = {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: 'm1', namespace: 'ml' },
      spec: {},
    };
    const outcome = reviewFinalizers(review('DeployedModel', object), allKinds);
    expect(outcome).toMatchObject({
      decision: 'patched',
      kind: 'DeployedModel',
      namespace: 'ml',
      name: 'm1',
      response: { uid: 'u-1', allowed: true, patchType: 'JSONPatch' },
    });
    expect(applyPatch(object, outcome.response.patch!).metadata).toEqual({
      name: 'm1',
      namespace: 'ml',
      finalizers: [FINALIZER],
    });
  });

  it('appends to finalizers set by someone else and keeps theirs', () => {
    const object = { metadata: { generateName: 'ep-', finalizers: ['example.com/keep'] } };
    const outcome = reviewFinalizers(review('PredictionEndpoint', object), allKinds);
    expect(outcome.name).toBe('ep-');
    expect(applyPatch(object, outcome.response.patch!).metadata).toEqual({
      generateName: 'ep-',
      finalizers: ['example.com/keep', FINALIZER],
    });
  });

  it('changes nothing when the finalizer is there, on UPDATE, on a subresource, or for a kind without a finalizer', () => {
    const present = { metadata: { name: 'x', finalizers: [FINALIZER] } };
    const plain = { metadata: { name: 'x' } };
    for (const request of [
      review('DeployedModel', present),
      review('DeployedModel', plain, { operation: 'UPDATE', oldObject: plain }),
      review('DeployedModel', plain, { subResource: 'status' }),
      review('RegistryEndpoint', plain),
      review('DeployedModel', 'not an object'),
    ]) {
      const outcome = reviewFinalizers(request, allKinds);
      expect(outcome.decision, JSON.stringify(request)).toBe('unchanged');
      expect(outcome.response).toEqual({ uid: 'u-1', allowed: true });
    }
  });
});
