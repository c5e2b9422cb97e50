import { describe, expect, it } from 'vitest';
import { Reasons as Reason } from '../../../src/api/common/conditions.js';
import { rfc3339, setCondition, type Condition } from '../../../src/runtime/conditions.js';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-01-01T00:05:00.750Z');

describe('setCondition', () => {
  it('appends a new condition type with lastTransitionTime = now (seconds precision)', () => {
    const out = setCondition(undefined, { type: 'Ready', status: 'Unknown', reason: Reason.Deploying, message: 'not yet reconciled', observedGeneration: 1 }, t0);
    expect(out).toEqual([{ type: 'Ready', status: 'Unknown', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Deploying', message: 'not yet reconciled' }]);
  });

  it('keeps lastTransitionTime when the status did not change, but updates reason, message and generation', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: Reason.ParentNotFound, message: 'a', observedGeneration: 1 }, t0);
    const second = setCondition(first, { type: 'Ready', status: 'False', reason: Reason.InvalidSpec, message: 'b', observedGeneration: 2 }, t1);
    expect(second[0]).toEqual({ type: 'Ready', status: 'False', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'InvalidSpec', message: 'b' });
  });

  it('moves lastTransitionTime when the status changes', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: Reason.ParentNotFound, message: 'a' }, t0);
    const second = setCondition(first, { type: 'Ready', status: 'True', reason: Reason.Reconciled, message: 'ok' }, t1);
    expect(second[0]?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
    expect(second[0]?.status).toBe('True');
  });

  it('is keyed by type: other conditions keep their place and content, and the input is not mutated', () => {
    const base: Condition[] = [
      { type: 'Ready', status: 'True', lastTransitionTime: 'x', reason: 'Reconciled', message: '' },
      { type: 'Degraded', status: 'False', lastTransitionTime: 'y', reason: 'Fine', message: '' },
    ];
    const copy = structuredClone(base);
    const out = setCondition(base, { type: 'Ready', status: 'False', reason: 'InvalidSpec', message: 'spec.port: bad' }, t1);
    expect(base).toEqual(copy);
    expect(out.map((c) => c.type)).toEqual(['Ready', 'Degraded']);
    expect(out[1]).toBe(base[1]);
    expect(out.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });

  it('rfc3339 drops milliseconds like metav1.Time', () => {
    expect(rfc3339(t1)).toBe('2026-01-01T00:05:00Z');
  });
});
