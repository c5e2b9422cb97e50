import { describe, expect, it } from 'vitest';
import {
  checkModelId,
  generatedModelId,
  mergeAliases,
  newModelSpec,
  nextVersionId,
  updatedFields,
} from '../../../../../src/gateway/writes/models/model-requests.js';

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
    expect(nextVersionId({ versions: [{ id: '1' }, { id: '2' }] as never }, { versions: [{ id: '5' }] })).toBe('6');
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

  it('updates only display_name, description and labels', () => {
    expect(
      updatedFields('displayName,labels', { displayName: 'x', labels: { a: 'b' }, description: 'ignored' }),
    ).toEqual({ displayName: 'x', labels: { a: 'b' } });
    expect(updatedFields('labels', {})).toEqual({ labels: {} });
    expect(violation(() => updatedFields('artifactUri', {}))).toEqual([
      { field: 'update_mask', description: expect.stringContaining('"artifact_uri" cannot be updated') },
    ]);
    expect(violation(() => updatedFields(undefined, {}))).toEqual([
      { field: 'update_mask', description: expect.stringContaining('required') },
    ]);
  });
});
