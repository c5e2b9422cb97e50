import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import {
  referencedModelKey,
  resolveModelReference,
  servedSpec,
  type ModelResolution,
} from '../../../src/reconcilers/model-reference.js';
import { computeModelStatus, deploymentsOf } from '../../../src/reconcilers/model-status.js';

const scope = { project: 'acme-{namespace}', location: 'europe-west4' };
const NAME = 'projects/acme-ml/locations/europe-west4/models/iris';
const container = (tag: string) => ({ imageUri: `registry.example/iris:${tag}`, predictRoute: '/predict' });

function registryModel(defaultVersion = '2', extraAliases: { alias: string; versionId: string }[] = []): KubeObject {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'Model',
    metadata: { name: 'iris', namespace: 'ml', generation: 3 },
    spec: {
      displayName: 'Iris',
      versions: ['1', '2', '3'].map((id) => ({
        id,
        artifactUri: `gs://models/iris/${id}`,
        containerSpec: container(id),
      })),
      versionAliases: [{ alias: 'default', versionId: defaultVersion }, ...extraAliases],
    },
  };
}

function deployed(model: string, extra: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name: 'iris-dm', namespace: 'ml' },
    spec: {
      endpointRef: { name: 'iris' },
      model,
      dedicatedResources: { machineSpec: { machineType: 'n1-standard-2' }, minReplicaCount: 1 },
      ...extra,
    },
    ...(status === undefined ? {} : { status }),
  };
}

const resolve = (dm: KubeObject, model: KubeObject | null = registryModel()): ModelResolution =>
  resolveModelReference(dm, scope, (ns, name) =>
    ns === 'ml' && name === 'iris' && model !== null ? model : undefined,
  );

describe('resolving a DeployedModel that names a Model', () => {
  it('resolves no @ to the default alias, @alias to its version and @id to that version', () => {
    const versionOf = (r: ModelResolution) => (r.form === 'resolved' ? r.version.id : r.form);
    expect(versionOf(resolve(deployed(NAME)))).toBe('2');
    expect(versionOf(resolve(deployed(`${NAME}@default`)))).toBe('2');
    expect(versionOf(resolve(deployed(`${NAME}@1`)))).toBe('1');
    expect(
      versionOf(resolve(deployed(`${NAME}@canary`), registryModel('2', [{ alias: 'canary', versionId: '3' }]))),
    ).toBe('3');
  });

  it('leaves inline models and other projects or locations alone, exactly as before', () => {
    expect(resolve(deployed(NAME, { containerSpec: container('x') })).form).toBe('inline');
    expect(resolve(deployed(NAME, { backend: { url: 'https://m.example/iris', protocol: 'Vertex' } })).form).toBe(
      'inline',
    );
    expect(resolve(deployed('projects/other/locations/europe-west4/models/iris')).form).toBe('inline');
    expect(resolve(deployed('projects/acme-ml/locations/us-central1/models/iris')).form).toBe('inline');
    expect(referencedModelKey(deployed('projects/other/locations/europe-west4/models/iris'), scope)).toBeUndefined();
    expect(referencedModelKey(deployed(`${NAME}@2`), scope)).toBe('ml/iris');
  });

  it('reports a missing Model, a missing version and a missing alias, naming what exists', () => {
    expect(resolve(deployed(NAME), null)).toMatchObject({
      form: 'missing-model',
      objectName: 'iris',
      modelName: NAME,
    });
    expect(resolve(deployed(`${NAME}@9`))).toMatchObject({
      form: 'missing-version',
      message: 'Model "iris" has no version "9" (spec.versions: 1, 2, 3)',
    });
    expect(resolve(deployed(`${NAME}@champion`))).toMatchObject({
      form: 'missing-version',
      message: 'Model "iris" has no alias "champion" (spec.versionAliases: default)',
    });
  });

  it('stays on the version in status when the alias moves, and says where the alias is now', () => {
    const pinned = deployed(`${NAME}@default`, {}, { modelVersionId: '2', modelReference: `${NAME}@default` });
    const r = resolve(pinned, registryModel('3'));
    expect(r).toMatchObject({ form: 'resolved', aliasVersionId: '3', alias: 'default' });
    expect(r.form === 'resolved' ? r.version.id : undefined).toBe('2');
    // A spec.model changed since: resolved again (an explicit redeploy).
    const edited = deployed(`${NAME}@1`, {}, { modelVersionId: '2', modelReference: `${NAME}@default` });
    const again = resolve(edited, registryModel('3'));
    expect(again.form === 'resolved' ? again.version.id : undefined).toBe('1');
  });

  it("serves the version's container and artifact through the inline fields", () => {
    const dm = deployed(`${NAME}@1`);
    expect(servedSpec(dm, resolve(dm))).toMatchObject({
      containerSpec: container('1'),
      artifactUri: 'gs://models/iris/1',
    });
    const inline = deployed(NAME, { containerSpec: container('x'), artifactUri: 'gs://elsewhere/x' });
    expect(servedSpec(inline, resolve(inline))).toMatchObject({
      containerSpec: container('x'),
      artifactUri: 'gs://elsewhere/x',
    });
  });
});

describe('Model status', () => {
  it('names the model, keeps version create times and lists who serves which version', () => {
    const model = { ...registryModel(), status: { versions: [{ id: '1', createTime: '2026-01-01T00:00:00Z' }] } };
    const dm = deployed(`${NAME}@default`, {}, { modelVersionId: '2', modelReference: `${NAME}@default` });
    const { status, verdict } = computeModelStatus({
      model,
      specErrors: [],
      references: [{ deployedModel: dm, resolution: resolve(dm, model) }],
      project: scope.project,
      location: scope.location,
      now: '2026-02-02T00:00:00Z',
    });
    expect(status.name).toBe(NAME);
    expect(status.versions).toEqual([
      { id: '1', createTime: '2026-01-01T00:00:00Z' },
      { id: '2', createTime: '2026-02-02T00:00:00Z' },
      { id: '3', createTime: '2026-02-02T00:00:00Z' },
    ]);
    expect(status.deployedModels).toEqual([{ deployedModel: 'iris-dm', endpoint: 'iris', versionId: '2' }]);
    expect(verdict).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(verdict.message).toContain('DeployedModel "iris-dm" serves version 2');
  });

  it('keeps the highest version id the model ever had, after that version is removed', () => {
    const world = { specErrors: [], references: [], ...scope, now: '2026-02-02T00:00:00Z' };
    expect(computeModelStatus({ ...world, model: registryModel() }).status.latestVersionId).toBe('3');
    const removed = registryModel();
    removed.spec = {
      ...(removed.spec as object),
      versions: (removed.spec as { versions: unknown[] }).versions.slice(0, 2),
    };
    removed.status = { latestVersionId: '3' };
    expect(computeModelStatus({ ...world, model: removed }).status.latestVersionId).toBe('3');
  });

  it('keeps listing a pinned DeployedModel whose version went missing, as it still serves it', () => {
    const dm = deployed(`${NAME}@default`, {}, { modelVersionId: '7', modelReference: `${NAME}@default` });
    expect(deploymentsOf({ references: [{ deployedModel: dm, resolution: resolve(dm) }] })).toEqual([
      { deployedModel: 'iris-dm', endpoint: 'iris', versionId: '7' },
    ]);
  });
});
