import { describe, expect, it } from 'vitest';
import { applyConflicts, clearConflicts, conflictRefusal, mayForce } from '../../../../src/gateway/writes/conflicts.js';
import { clearedPaths } from '../../../../src/gateway/writes/update-mask.js';

/** A 409 as kube-apiserver 1.37 answers a server-side apply conflict. */
function conflictStatus(...causes: { manager: string; field: string }[]) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: `Apply failed with ${causes.length} conflict(s)`,
    reason: 'Conflict',
    details: {
      name: 'iris',
      group: 'prediction.endpoint-operator.dev',
      kind: 'models',
      causes: causes.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with "${c.manager}" using prediction.endpoint-operator.dev/v1`,
        field: c.field,
      })),
    },
    code: 409,
  };
}

describe('apply conflicts', () => {
  it('reads each field and its manager from the Status causes', () => {
    expect(
      applyConflicts(
        conflictStatus(
          { manager: 'argocd-controller', field: '.spec.displayName' },
          { manager: 'vertex-api/bob', field: '.spec.labels.team' },
        ),
      ),
    ).toEqual([
      { field: 'spec.displayName', manager: 'argocd-controller' },
      { field: 'spec.labels.team', manager: 'vertex-api/bob' },
    ]);
    expect(applyConflicts({ kind: 'Status', reason: 'Conflict' })).toEqual([]);
    expect(applyConflicts('not a status')).toEqual([]);
  });

  it('forces only over other API callers', () => {
    expect(mayForce([{ field: 'spec.displayName', manager: 'vertex-api/bob' }])).toBe(true);
    expect(
      mayForce([
        { field: 'spec.displayName', manager: 'vertex-api/bob' },
        { field: 'spec.labels', manager: 'flux' },
      ]),
    ).toBe(false);
    expect(mayForce([])).toBe(false);
  });

  it('refuses ABORTED naming the fields and their GitOps manager', () => {
    const err = conflictRefusal('Model "iris" in namespace "team-a"', [
      { field: 'spec.displayName', manager: 'argocd-controller' },
      { field: 'spec.description', manager: 'argocd-controller' },
      { field: 'spec.labels.team', manager: 'vertex-api/bob' },
    ]);
    expect(err.status).toBe('ABORTED');
    expect(err.message).toContain('spec.displayName, spec.description are managed by "argocd-controller"');
    expect(err.message).not.toContain('vertex-api/bob');
    expect(err.message).toContain('change it in Git, or ask its owner');
  });
});

describe('clearing a masked field another manager owns', () => {
  const endpoint = {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: {
      name: 'iris',
      managedFields: [
        { manager: 'argocd-controller', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:labels': { 'f:team': {} } } } },
        { manager: 'vertex-api/alice', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:description': {} } } },
      ],
    },
    spec: { labels: { team: 'ml' }, description: 'd' },
  };

  it('is a conflict naming the GitOps manager, since server-side apply would keep the field and say nothing', () => {
    const cleared = clearedPaths([
      [['labels'], {}],
      [['description'], ''],
      [['displayName'], 'kept'],
    ]);
    expect(cleared).toEqual([
      ['spec', 'labels'],
      ['spec', 'description'],
    ]);
    expect(clearConflicts(endpoint, cleared)).toEqual([{ field: 'spec.labels', manager: 'argocd-controller' }]);
  });

  it('is no conflict when only API callers own the field', () => {
    expect(clearConflicts(endpoint, [['spec', 'description']])).toEqual([]);
  });
});
