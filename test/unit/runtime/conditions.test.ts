import { describe, expect, it } from 'vitest';
import { Reasons as Reason } from '../../../src/api/common/conditions.js';
import { rfc3339, setCondition, withVerdictConditions, type Condition } from '../../../src/runtime/conditions.js';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-01-01T00:05:00.750Z');

describe('setCondition', () => {
  it('appends a new condition type with lastTransitionTime = now (seconds precision)', () => {
    const out = setCondition(
      undefined,
      {
        type: 'Ready',
        status: 'Unknown',
        reason: Reason.Deploying,
        message: 'not yet reconciled',
        observedGeneration: 1,
      },
      t0,
    );
    expect(out).toEqual([
      {
        type: 'Ready',
        status: 'Unknown',
        observedGeneration: 1,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'Deploying',
        message: 'not yet reconciled',
      },
    ]);
  });

  it('keeps lastTransitionTime when the status did not change, but updates reason, message and generation', () => {
    const first = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: Reason.ParentNotFound, message: 'a', observedGeneration: 1 },
      t0,
    );
    const second = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: Reason.InvalidSpec, message: 'b', observedGeneration: 2 },
      t1,
    );
    expect(second[0]).toEqual({
      type: 'Ready',
      status: 'False',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'InvalidSpec',
      message: 'b',
    });
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
    const out = setCondition(
      base,
      { type: 'Ready', status: 'False', reason: 'InvalidSpec', message: 'spec.port: bad' },
      t1,
    );
    expect(base).toEqual(copy);
    expect(out.map((c) => c.type)).toEqual(['Ready', 'Degraded']);
    expect(out[1]).toBe(base[1]);
    expect(out.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });

  it('rfc3339 drops milliseconds like metav1.Time', () => {
    expect(rfc3339(t1)).toBe('2026-01-01T00:05:00Z');
  });
});

describe('withVerdictConditions (Ready plus kstatus conditions)', () => {
  it('a waiting reason sets Reconciling=True beside Ready, with its reason, message and generation', () => {
    const out = withVerdictConditions(
      undefined,
      { status: 'False', reason: Reason.ParentNotFound, message: 'apply the parent' },
      3,
      t0,
    );
    expect(out).toEqual([
      {
        type: 'Ready',
        status: 'False',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'ParentNotFound',
        message: 'apply the parent',
      },
      {
        type: 'Reconciling',
        status: 'True',
        observedGeneration: 3,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'ParentNotFound',
        message: 'apply the parent',
      },
    ]);
  });

  it('a stuck reason replaces Reconciling by Stalled=True; Reconciled removes both and keeps other types', () => {
    const waiting = withVerdictConditions(
      [{ type: 'Custom', status: 'True', lastTransitionTime: 'c', reason: 'Mine', message: '' }],
      { status: 'False', reason: Reason.ParentNotFound, message: 'a' },
      1,
      t0,
    );
    const stuck = withVerdictConditions(
      waiting,
      { status: 'False', reason: Reason.InvalidSpec, message: 'spec.port: fix it' },
      2,
      t1,
    );
    expect(stuck.map((c) => [c.type, c.status, c.reason, c.observedGeneration])).toEqual([
      ['Custom', 'True', 'Mine', undefined],
      ['Ready', 'False', 'InvalidSpec', 2],
      ['Stalled', 'True', 'InvalidSpec', 2],
    ]);
    // Ready stayed False: its transition time is kept; Stalled is new.
    expect(stuck.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(stuck.find((c) => c.type === 'Stalled')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
    const done = withVerdictConditions(stuck, { status: 'True', reason: Reason.Reconciled, message: 'ok' }, 2, t1);
    expect(done.map((c) => c.type)).toEqual(['Custom', 'Ready']);
  });

  it('the same verdict for the same generation gives an identical list (no status write)', () => {
    const verdict = { status: 'Unknown', reason: Reason.Deploying, message: 'assigning an id' } as const;
    const once = withVerdictConditions(undefined, verdict, 1, t0);
    expect(withVerdictConditions(once, verdict, 1, t1)).toEqual(once);
  });
});
