/**
 * Models as objects on the real control plane, applied as GitOps applies them (kubectl apply of whole
 * manifests): a DeployedModel that names `…/models/iris@default` is served from the version the alias names
 * (the Deployment runs that version's container with its artifact in AIP_STORAGE_URI); moving the alias in Git
 * does not redeploy it (it stays on the version in status.modelVersionId and says the alias moved); the
 * apiserver refuses deleting the deployed Model, removing its served version and changing a version, and lets
 * the Model go once nothing serves it. Pods run on kwok's simulated nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { apply, eventually, getJson, readyOf, runOperatorWithCrds, type TestOperator } from './harness.js';

interface Deployment {
  metadata: { generation?: number };
  spec: {
    template: {
      spec: {
        containers: { image: string; env: { name: string; value: string }[]; volumeMounts?: unknown }[];
        volumes?: unknown;
      };
    };
  };
}

/** The bucket the Model's versions name (gs://), cluster-scoped: a name of this file's own. */
const BUCKET = 'models-test-iris';
const bucketMap = `
apiVersion: prediction.endpoint-operator.dev/v1
kind: ModelArtifactBucket
metadata: { name: ${BUCKET} }
spec:
  oci: { repository: registry.example/models }
`;

const version = (id: string, image: string) => `
    - id: "${id}"
      artifactUri: gs://${BUCKET}/iris/${id}
      containerSpec:
        imageUri: ${image}
        predictRoute: /predict
        healthRoute: /health`;

const modelManifest = (defaultVersion: string, versions = ['1', '2'], image2 = 'registry.example/iris:2') => `
apiVersion: prediction.endpoint-operator.dev/v1
kind: Model
metadata: { name: iris }
spec:
  displayName: Iris
  versions:${versions.map((id) => version(id, id === '2' ? image2 : `registry.example/iris:${id}`)).join('')}
  versionAliases:
    - { alias: default, versionId: "${defaultVersion}" }
`;

describe('Model and DeployedModels that name it', () => {
  let ns: string;
  let op: TestOperator;
  const deployed = (ns: string) => `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: iris }
spec: { displayName: Iris }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: iris-default }
spec:
  endpointRef: { name: iris }
  id: "7100"
  model: projects/${ns}/locations/europe-west4/models/iris@default
  dedicatedResources: { machineSpec: { machineType: n1-standard-2 }, minReplicaCount: 1 }
`;

  beforeAll(async () => {
    ns = await createTestNamespace('models');
    op = await runOperatorWithCrds(ns);
  });

  afterAll(async () => {
    await kubectl(['delete', 'modelartifactbucket', BUCKET, '--ignore-not-found']);
    await op?.stop();
  });

  it('serves the version the default alias names, and lists the deployment in the Model', async () => {
    // The DeployedModel first: applied in one sync, the Model may come second.
    await apply(ns, deployed(ns));
    await eventually('ModelNotFound while the Model is missing', async () => {
      const r = readyOf(await getJson(ns, 'deployedmodel/iris-default'));
      return r?.reason === 'ModelNotFound' && r.message?.includes('Model "iris"');
    });
    await apply(ns, modelManifest('2'));
    // The version's gs:// bucket is not in the bucket map yet: the apiserver cannot know (CEL sees one object), so
    // the reconciler says it, Stalled, and creates nothing.
    const unmapped = await eventually('ArtifactBucketUnmapped while the bucket map lacks the bucket', async () => {
      const obj = await getJson(ns, 'deployedmodel/iris-default');
      return readyOf(obj)?.reason === 'ArtifactBucketUnmapped' ? obj : undefined;
    });
    expect(readyOf(unmapped)?.status).toBe('False');
    expect(readyOf(unmapped)?.message).toContain(`bucket "${BUCKET}" is not in the bucket map`);
    expect(readyOf(unmapped)?.message).toContain(`add a ModelArtifactBucket "${BUCKET}"`);
    const stalled = (unmapped.status?.conditions as { type: string; status: string }[] | undefined)?.find(
      (c) => c.type === 'Stalled',
    );
    expect(stalled?.status).toBe('True');
    expect(await getJson(ns, 'deployment/dm-iris-default').catch(() => undefined)).toBeUndefined();
    // The mapping appears (a cluster-scoped object, applied without a namespace): the model deploys.
    const mapped = await kubectl(['apply', '-f', '-'], { input: bucketMap });
    expect(mapped.code, mapped.stderr).toBe(0);
    const dm = await eventually('the DeployedModel pinned to version 2', async () => {
      const obj = await getJson(ns, 'deployedmodel/iris-default');
      return obj.status?.modelVersionId === '2' ? obj : undefined;
    });
    expect(dm.status?.modelReference).toBe(`projects/${ns}/locations/europe-west4/models/iris@default`);
    const deployment = await eventually('the Deployment of version 2', async () => {
      const d = (await getJson(ns, 'deployment/dm-iris-default').catch(() => undefined)) as unknown as
        Deployment | undefined;
      return d?.spec.template.spec.containers[0]?.image === 'registry.example/iris:2' ? d : undefined;
    });
    const env = Object.fromEntries(
      deployment.spec.template.spec.containers[0]?.env.map((e) => [e.name, e.value]) ?? [],
    );
    // gs://models-test-iris/iris/2 through the bucket map: the image volume registry.example/models/iris:2.
    expect(env['AIP_STORAGE_URI']).toBe('/mnt/models');
    expect(deployment.spec.template.spec.volumes).toEqual([
      { name: 'model-artifact', image: { reference: 'registry.example/models/iris:2', pullPolicy: 'IfNotPresent' } },
    ]);
    expect(deployment.spec.template.spec.containers[0]?.volumeMounts).toEqual([
      { name: 'model-artifact', mountPath: '/mnt/models', readOnly: true },
    ]);
    const model = await eventually('the Model lists its deployment', async () => {
      const m = await getJson(ns, 'model/iris');
      return Array.isArray(m.status?.deployedModels) && m.status.deployedModels.length === 1 ? m : undefined;
    });
    expect(model.status?.deployedModels).toEqual([{ deployedModel: 'iris-default', endpoint: 'iris', versionId: '2' }]);
    expect(model.status?.name).toBe(`projects/${ns}/locations/europe-west4/models/iris`);
    expect(readyOf(model)?.reason).toBe('Reconciled');
    const columns = await kubectl(['get', 'models', '-n', ns]);
    expect(columns.stdout).toMatch(/iris\s+Iris\s+2\s+2\s+True\s+Reconciled/);
  });

  it('keeps serving the pinned version when the default alias moves, and says so', async () => {
    const before = (await getJson(ns, 'deployment/dm-iris-default')) as unknown as Deployment;
    await apply(ns, modelManifest('1'));
    const dm = await eventually('the DeployedModel notes the move', async () => {
      const obj = await getJson(ns, 'deployedmodel/iris-default');
      return obj.status?.aliasVersionId === '1' ? obj : undefined;
    });
    expect(dm.status?.modelVersionId).toBe('2');
    expect(readyOf(dm)?.message).toContain('alias "default" now names version 1; this model keeps serving version 2');
    const after = (await getJson(ns, 'deployment/dm-iris-default')) as unknown as Deployment;
    expect(after.spec.template.spec.containers[0]?.image).toBe('registry.example/iris:2');
    expect(after.metadata.generation).toBe(before.metadata.generation);
  });

  it('refuses a changed version, removing the served version and deleting the Model while it is deployed', async () => {
    const changed = await kubectl(['apply', '-n', ns, '-f', '-'], {
      input: modelManifest('1', ['1', '2'], 'registry.example/iris:2b'),
    });
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('spec.versions[1]');
    expect(changed.stderr).toContain('version "2" changed');

    const removed = await kubectl(['apply', '-n', ns, '-f', '-'], { input: modelManifest('1', ['1']) });
    expect(removed.code).not.toBe(0);
    expect(removed.stderr).toContain('version 2 may not be removed while DeployedModel iris-default serves it');

    const deleted = await kubectl(['delete', '-n', ns, 'model/iris', '--wait=false']);
    expect(deleted.code).not.toBe(0);
    expect(deleted.stderr).toContain('FAILED_PRECONDITION');
    expect(deleted.stderr).toContain('DeployedModel iris-default serves version 2');
    expect((await getJson(ns, 'model/iris')).metadata.deletionTimestamp).toBeUndefined();
  });

  it('lets the Model go once no DeployedModel serves it', async () => {
    expect(
      (await kubectl(['delete', '-n', ns, 'deployedmodel/iris-default', '--wait=true', '--timeout=60s'])).code,
    ).toBe(0);
    await eventually('the Model lists no deployment', async () => {
      const m = await getJson(ns, 'model/iris');
      return m.status?.deployedModels === undefined;
    });
    const deleted = await kubectl(['delete', '-n', ns, 'model/iris', '--wait=true', '--timeout=30s']);
    expect(deleted.code, deleted.stderr).toBe(0);
  });
});
