import { describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../../../src/api/common/kind.js';
import { validateModel } from '../../../../../src/api/prediction/v1/model-validation.js';

const container = { imageUri: 'europe-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-3:latest' };
const version = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  artifactUri: `gs://demo-models/iris/${id}`,
  containerSpec: container,
  ...extra,
});
function model(spec: Record<string, unknown> = {}, status?: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'Model',
    metadata: { name: 'iris', namespace: 'ml' },
    spec: {
      displayName: 'Iris',
      versions: [version('1'), version('2')],
      versionAliases: [
        { alias: 'default', versionId: '2' },
        { alias: 'previous', versionId: '1' },
      ],
      ...spec,
    },
    ...(status === undefined ? {} : { status }),
  };
}
const check = (obj: unknown, old?: unknown) => validateModel(obj, old, defaultValidationOptions).errors;
const fields = (obj: unknown, old?: unknown) => check(obj, old).map((e) => e.field);

describe('Model validation', () => {
  it('accepts versions with gs://, oci:// and pvc:// artifacts, and aliases naming them', () => {
    expect(check(model())).toEqual([]);
    const artifacts = ['oci://registry.local:5000/models/iris:1', 'pvc://model-store/iris/1', undefined];
    expect(
      check(
        model({
          versions: artifacts.map((a, i) => version(String(i + 1), { artifactUri: a })),
          versionAliases: [{ alias: 'default', versionId: '3' }],
        }),
      ),
    ).toEqual([]);
  });

  it('refuses a repeated version id or alias, each at its entry', () => {
    expect(
      fields(model({ versions: [version('1'), version('1')], versionAliases: [{ alias: 'default', versionId: '1' }] })),
    ).toEqual(['spec.versions[1].id']);
    expect(
      fields(
        model({
          versionAliases: [
            { alias: 'default', versionId: '1' },
            { alias: 'default', versionId: '2' },
          ],
        }),
      ),
    ).toEqual(['spec.versionAliases[1].alias']);
  });

  it('requires the default alias, and every alias to name an existing version, naming both', () => {
    expect(fields(model({ versionAliases: [{ alias: 'champion', versionId: '1' }] }))).toEqual(['spec.versionAliases']);
    const [missing] = check(
      model({
        versionAliases: [
          { alias: 'default', versionId: '1' },
          { alias: 'champion', versionId: '7' },
        ],
      }),
    );
    expect(missing?.field).toBe('spec.versionAliases');
    expect(missing?.detail).toContain('alias "champion" (spec.versionAliases[1]) names version "7"');
  });

  it("refuses Vertex's malformed ids and aliases: leading zeros, numbers as aliases, a trailing dash", () => {
    expect(
      fields(model({ versions: [version('01')], versionAliases: [{ alias: 'default', versionId: '01' }] })),
    ).toContain('spec.versions[0].id');
    for (const alias of ['7', 'Default', 'canary-', 'x'])
      expect(
        fields(
          model({
            versionAliases: [
              { alias: 'default', versionId: '1' },
              { alias, versionId: '1' },
            ],
          }),
        ),
        alias,
      ).toEqual(['spec.versionAliases[1].alias']);
    expect(
      fields(
        model({
          versions: [version('1', { artifactUri: '/tmp/iris' })],
          versionAliases: [{ alias: 'default', versionId: '1' }],
        }),
      ),
    ).toEqual(['spec.versions[0].artifactUri']);
  });

  it("checks each version's containerSpec as a DeployedModel's, at the version's path", () => {
    const slow = version('1', { containerSpec: { ...container, deploymentTimeout: '9000s' } });
    expect(fields(model({ versions: [slow], versionAliases: [{ alias: 'default', versionId: '1' }] }))).toEqual([
      'spec.versions[0].containerSpec.deploymentTimeout',
    ]);
  });

  it('lets an alias move and a version be added, but never a version change', () => {
    const old = model();
    expect(check(model({ versionAliases: [{ alias: 'default', versionId: '1' }] }), old)).toEqual([]);
    expect(check(model({ versions: [version('1'), version('2'), version('3')] }), old)).toEqual([]);
    const changed = check(
      model({ versions: [version('1'), version('2', { artifactUri: 'gs://demo-models/iris/2b' })] }),
      old,
    );
    expect(changed.map((e) => e.field)).toEqual(['spec.versions[1]']);
    expect(changed[0]?.detail).toContain('version "2" changed');
  });

  it('refuses removing a version that status.deployedModels lists as served, not another one', () => {
    const old = model({}, { deployedModels: [{ deployedModel: 'iris-default', endpoint: 'iris', versionId: '2' }] });
    const removed = check(
      model({ versions: [version('1')], versionAliases: [{ alias: 'default', versionId: '1' }] }),
      old,
    );
    expect(removed.map((e) => e.field)).toEqual(['spec.versions']);
    expect(removed[0]?.detail).toContain('version "2" may not be removed while DeployedModel "iris-default" serves it');
    expect(
      check(model({ versions: [version('2')], versionAliases: [{ alias: 'default', versionId: '2' }] }), old),
    ).toEqual([]);
  });
});
