import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chooseId,
  effectiveId,
  IdAssignments,
  resolveModelStates,
} from '../../../src/reconcilers/deployed-model-ids.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { deployedModel } from './fixtures.js';

describe('deployed-model ids', () => {
  it('prefers spec.id, then status.id, then an assignment of this process', () => {
    const assigned = new IdAssignments();
    const m = deployedModel('m', 'ep').build();
    expect(effectiveId(m, assigned.view)).toBeUndefined();
    assigned.record(m.metadata.uid ?? '', '123');
    expect(effectiveId(m, assigned.view)).toBe('123');
    expect(effectiveId({ ...m, status: { id: '456' } }, assigned.view)).toBe('456');
    expect(
      effectiveId({ ...m, spec: { ...(m.spec as object), id: '789' }, status: { id: '456' } }, assigned.view),
    ).toBe('789');
    assigned.forget(m.metadata.uid ?? '');
    expect(effectiveId(m, assigned.view)).toBeUndefined();
  });

  it('chooses the same id again for the same model (a retry after a failed write)', () => {
    const m = deployedModel('m', 'ep').build();
    expect(chooseId(m, [m], new Map())).toBe(chooseId(m, [m], new Map()));
    expect(chooseId(m, [m], new Map())).toMatch(/^[1-9][0-9]{9}$/);
  });

  it('never gives two models of one endpoint the same id, whatever the order of assignment', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.array(fc.nat(), { maxLength: 40 }), (count, order) => {
        const models: KubeObject[] = Array.from({ length: count }, (_, i) => deployedModel(`m${i}`, 'ep').build());
        const assigned = new IdAssignments();
        // Assign in an arbitrary interleaving, as concurrent workers would; each assignment sees the earlier ones.
        const sequence = [...order.map((n) => n % count), ...models.keys()];
        for (const i of sequence) {
          const m = models[i];
          if (m === undefined || effectiveId(m, assigned.view) !== undefined) continue;
          assigned.record(m.metadata.uid ?? '', chooseId(m, models, assigned.view));
        }
        const ids = models.map((m) => effectiveId(m, assigned.view));
        expect(new Set(ids).size).toBe(count);
        const states = resolveModelStates(models, () => true, assigned.view);
        expect([...states.values()].every((s) => s.state === 'deployed')).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it('avoids ids used explicitly by siblings, even when the seed would hit one', () => {
    const m = deployedModel('m', 'ep').build();
    const wanted = chooseId(m, [m], new Map());
    const taken = deployedModel('x', 'ep', { id: wanted }).build();
    const other = chooseId(m, [m, taken], new Map());
    expect(other).not.toBe(wanted);
  });

  it('gives an id to the oldest claimant and marks younger ones duplicate; invalid models claim nothing', () => {
    const old = deployedModel('old', 'ep', { id: '1' }).created('2026-01-01T00:00:00Z').build();
    const young = deployedModel('young', 'ep', { id: '1' }).created('2026-01-02T00:00:00Z').build();
    const invalid = deployedModel('bad', 'ep', { id: '1' }).created('2025-01-01T00:00:00Z').build();
    const states = resolveModelStates([young, invalid, old], (m) => m.metadata.name !== 'bad', new Map());
    expect(states.get('old')).toEqual({ state: 'deployed', id: '1' });
    expect(states.get('young')).toEqual({ state: 'duplicate', id: '1', owner: 'old' });
    expect(states.get('bad')).toEqual({ state: 'invalid' });
  });
});
