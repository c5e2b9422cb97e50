import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../../src/api/common/kube-object.js';
import { versionAt, vertexModel } from '../../../../../src/gateway/writes/models/vertex-model.js';

const obj: KubeObject = {
  metadata: {
    name: 'iris',
    namespace: 'team-a',
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'vertex-api/alice', operation: 'Apply', time: '2026-01-05T00:00:00Z' }],
  },
  spec: {
    displayName: 'Iris',
    labels: { team: 'ml' },
    versions: [
      {
        id: '1',
        artifactUri: 'gs://b/iris/1',
        containerSpec: { imageUri: 'img:1', protocol: 'KServeV1', healthProbe: { periodSeconds: 5 } },
      },
      {
        id: '2',
        versionDescription: 'retrained',
        containerSpec: { imageUri: 'img:2', ports: [{ containerPort: 8080 }] },
      },
    ],
    versionAliases: [
      { alias: 'default', versionId: '2' },
      { alias: 'previous', versionId: '1' },
    ],
  },
  status: {
    versions: [
      { id: '1', createTime: '2026-01-02T00:00:00Z' },
      { id: '2', createTime: '2026-01-03T00:00:00Z' },
    ],
    deployedModels: [{ deployedModel: 'iris-default', endpoint: 'iris', versionId: '2' }],
  },
};

describe("a Model object as Vertex's Model", () => {
  it('picks the version by id, alias, or the default alias', () => {
    const spec = obj.spec as never;
    expect(versionAt(spec, '1')?.id).toBe('1');
    expect(versionAt(spec, 'previous')?.id).toBe('1');
    expect(versionAt(spec, undefined)?.id).toBe('2');
    expect(versionAt(spec, '9')).toBeUndefined();
  });

  it('carries what the Python SDK reads before deploy, and only ModelContainerSpec fields', () => {
    const name = 'projects/team-a/locations/l/models/iris';
    const lookup = (dm: string) =>
      dm === 'iris-default' ? { endpoint: 'projects/team-a/locations/l/endpoints/iris', id: '6100' } : undefined;
    expect(vertexModel(obj, (obj.spec as { versions: never[] }).versions[1] as never, name, lookup)).toEqual({
      name,
      versionId: '2',
      versionAliases: ['default'],
      versionCreateTime: '2026-01-03T00:00:00Z',
      versionUpdateTime: '2026-01-05T00:00:00Z',
      displayName: 'Iris',
      versionDescription: 'retrained',
      containerSpec: { imageUri: 'img:2', ports: [{ containerPort: 8080 }] },
      supportedDeploymentResourcesTypes: ['DEDICATED_RESOURCES'],
      createTime: '2026-01-01T00:00:00Z',
      updateTime: '2026-01-05T00:00:00Z',
      deployedModels: [{ endpoint: 'projects/team-a/locations/l/endpoints/iris', deployedModelId: '6100' }],
      labels: { team: 'ml' },
    });
    const v1 = vertexModel(obj, (obj.spec as { versions: never[] }).versions[0] as never, name, lookup);
    expect(v1).toMatchObject({
      versionId: '1',
      versionAliases: ['previous'],
      artifactUri: 'gs://b/iris/1',
      containerSpec: { imageUri: 'img:1' },
    });
    expect(v1.deployedModels).toBeUndefined();
  });
});
