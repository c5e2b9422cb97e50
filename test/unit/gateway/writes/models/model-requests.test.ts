import { describe, expect, it } from 'vitest';
import {
  checkModelId,
  generatedModelId,
  mergeAliases,
  newModelSpec,
  nextVersionId,
  UPDATE_MODEL_MASK,
} from '../../../../../src/gateway/writes/models/model-requests.js';
import { maskedChanges, maskPaths } from '../../../../../src/gateway/writes/update-mask.js';

function violation(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return (err as { status: string; fieldViolations: unknown }).fieldViolations;
  }
  throw new Error('no error');
}

describe('ModelService requests as Model objects', () => {
  it("takes Vertex's model ids as object names, and generates 19 digits", () => {
    expect(() => checkModelId('iris-2')).not.toThrow();
    for (const bad of ['Iris', 'iris_2', '2iris', 'iris-', 'x'.repeat(64)])
      expect(violation(() => checkModelId(bad))).toEqual([
        { field: 'model_id', description: expect.stringContaining('model id') },
      ]);
    expect(generatedModelId()).toMatch(/^[1-9][0-9]{18}$/);
  });

  it('makes version 1 with the default alias, and the next id after every version seen', () => {
    const spec = newModelSpec({
      displayName: 'Iris',
      artifactUri: 'gs://b/iris/1',
      versionAliases: ['default', 'champion'],
      containerSpec: {
        imageUri: 'img',
        env: [{ name: 'A', value: '1' }],
        ports: [{ containerPort: 8080 }],
        grpcPorts: [],
      },
    });
    expect(spec).toEqual({
      displayName: 'Iris',
      versions: [
        {
          id: '1',
          artifactUri: 'gs://b/iris/1',
          containerSpec: { imageUri: 'img', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 8080 }] },
        },
      ],
      versionAliases: [
        { alias: 'default', versionId: '1' },
        { alias: 'champion', versionId: '1' },
      ],
    });
    expect(violation(() => newModelSpec({ displayName: 'x' }))).toEqual([
      { field: 'model.container_spec.image_uri', description: expect.stringContaining('required') },
    ]);
    // The probes and the deployment timeout are kept (the validators judge them); gRPC ports are refused, not dropped.
    const probe = { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 };
    const kept = newModelSpec({
      displayName: 'x',
      containerSpec: { imageUri: 'img', startupProbe: probe, healthProbe: probe, deploymentTimeout: '900s' },
    });
    expect(kept.versions?.[0]?.containerSpec).toEqual({
      imageUri: 'img',
      startupProbe: probe,
      healthProbe: probe,
      deploymentTimeout: '900s',
    });
    expect(
      violation(() =>
        newModelSpec({ displayName: 'x', containerSpec: { imageUri: 'img', grpcPorts: [{ containerPort: 9000 }] } }),
      ),
    ).toEqual([{ field: 'model.container_spec.grpc_ports', description: expect.stringContaining('not served') }]);
    expect(nextVersionId({ versions: [{ id: '1' }, { id: '2' }] as never }, { versions: [{ id: '5' }] })).toBe('6');
    // Version 3 was deleted: its id stays taken (the operator's status.latestVersionId), as on Vertex.
    expect(nextVersionId({ versions: [{ id: '1' }, { id: '2' }] as never }, { latestVersionId: '3' })).toBe('4');
  });

  it('merges aliases: alias moves it here, -alias removes it from this version, never default', () => {
    const current = [
      { alias: 'default', versionId: '1' },
      { alias: 'champion', versionId: '2' },
    ];
    expect(mergeAliases(current, '2', ['default', '-champion'])).toEqual({
      set: [{ alias: 'default', versionId: '2' }],
      removed: ['champion'],
    });
    expect(violation(() => mergeAliases(current, '2', ['-default']))).toEqual([
      { field: 'version_aliases[0]', description: expect.stringContaining('cannot be removed') },
    ]);
    expect(violation(() => mergeAliases(current, '1', ['ok', '-champion']))).toEqual([
      { field: 'version_aliases[1]', description: 'version 1 has no alias "champion" to remove' },
    ]);
    expect(violation(() => mergeAliases(current, '1', ['1x']))).toEqual([
      { field: 'version_aliases[0]', description: expect.stringContaining('invalid value "1x"') },
    ]);
  });

  it('updates only display_name, description and labels, the mask in either spelling', () => {
    const model = { displayName: 'x', labels: { a: 'b' }, description: 'ignored' };
    expect(maskedChanges(model, maskPaths('display_name,labels'), UPDATE_MODEL_MASK)).toEqual({
      changes: [
        [['displayName'], 'x'],
        [['labels'], { a: 'b' }],
      ],
      violations: [],
    });
    expect(maskedChanges({}, maskPaths({ paths: ['labels'] }), UPDATE_MODEL_MASK).changes).toEqual([
      [['labels'], undefined],
    ]);
    expect(maskedChanges({}, maskPaths('artifactUri'), UPDATE_MODEL_MASK).violations).toEqual([
      { field: 'update_mask', description: expect.stringContaining('"artifactUri" cannot be updated') },
    ]);
    expect(maskedChanges({}, maskPaths(undefined), UPDATE_MODEL_MASK).violations).toEqual([
      { field: 'update_mask', description: expect.stringContaining('required') },
    ]);
  });
});
