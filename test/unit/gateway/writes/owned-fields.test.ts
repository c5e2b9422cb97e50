import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';
import { ownedFields, specManagers, withKeyed } from '../../../../src/gateway/writes/owned-fields.js';

const model: KubeObject = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'Model',
  metadata: {
    name: 'iris',
    annotations: { 'endpoint-operator.dev/written-by': 'alice', other: 'x' },
    managedFields: [
      {
        manager: 'vertex-api/alice',
        operation: 'Apply',
        fieldsV1: {
          'f:metadata': { 'f:annotations': { 'f:endpoint-operator.dev/written-by': {} } },
          'f:spec': {
            'f:displayName': {},
            'f:labels': { 'f:team': {} },
            'f:versions': { 'k:{"id":"1"}': { '.': {}, 'f:id': {}, 'f:containerSpec': { 'f:imageUri': {} } } },
            'f:versionAliases': { 'k:{"alias":"default"}': { '.': {}, 'f:alias': {}, 'f:versionId': {} } },
          },
        },
      },
      { manager: 'argocd-controller', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:description': {} } } },
      { manager: 'endpoint-operator', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
    ],
  },
  spec: {
    displayName: 'Iris',
    description: 'from git',
    labels: { team: 'ml', env: 'prod' },
    versions: [
      { id: '1', containerSpec: { imageUri: 'img:1' } },
      { id: '2', containerSpec: { imageUri: 'img:2' } },
    ],
    versionAliases: [{ alias: 'default', versionId: '1' }],
  },
};

describe('ownedFields', () => {
  it('extracts exactly what a manager applied: fields, map keys, list entries by key', () => {
    expect(ownedFields(model, 'vertex-api/alice')).toEqual({
      metadata: { annotations: { 'endpoint-operator.dev/written-by': 'alice' } },
      spec: {
        displayName: 'Iris',
        labels: { team: 'ml' },
        versions: [{ id: '1', containerSpec: { imageUri: 'img:1' } }],
        versionAliases: [{ alias: 'default', versionId: '1' }],
      },
    });
    expect(ownedFields(model, 'vertex-api/bob')).toEqual({});
    expect(ownedFields(undefined, 'vertex-api/alice')).toEqual({});
  });

  it('lists the managers of the spec, not of the status', () => {
    expect(specManagers(model)).toEqual(['vertex-api/alice', 'argocd-controller']);
  });

  it('puts entries in place by key', () => {
    expect(
      withKeyed(
        [
          { alias: 'default', versionId: '1' },
          { alias: 'b', versionId: '1' },
        ],
        [
          { alias: 'b', versionId: '2' },
          { alias: 'c', versionId: '2' },
        ],
        'alias',
      ),
    ).toEqual([
      { alias: 'default', versionId: '1' },
      { alias: 'b', versionId: '2' },
      { alias: 'c', versionId: '2' },
    ]);
  });
});
