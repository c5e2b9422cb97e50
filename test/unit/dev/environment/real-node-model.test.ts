import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';
import { parseMachineCatalogue } from '../../../../src/api/prediction/v1/machine-catalogue.js';
import {
  REAL_NODE_MACHINE_TYPE,
  realModelEndpoint,
  realModelLines,
  realNodeCatalogueConfigMap,
  withRealModel,
} from '../../../../dev/environment/real-node-model.js';
import { IRIS_INSTANCES } from '../../../../dev/models/iris-model.js';
import { ON_REAL_NODE } from '../../../../dev/cluster/real-node/node-config.js';
import { defaultExamplesDir, loadExampleObjects } from '../../../../dev/environment/examples.js';

const IMAGE = '198.19.254.1:5000/endpoint-operator/endpoint-operator-model-server-vertex-sklearn:abc';

describe('withRealModel', () => {
  it("turns the examples' containerSpec model into the iris server on the real node and leaves every other object alone", async () => {
    const examples = await loadExampleObjects(defaultExamplesDir());
    const out = withRealModel(examples, IMAGE);
    expect(out).toHaveLength(examples.length);
    const changed = out.filter((o, i) => o !== examples[i]);
    expect(changed.map((o) => o.metadata.name).sort()).toEqual(['churn-xgb-v3', 'demo-models']);
    // The bucket of its gs:// artifact is mapped to the local registry, where the iris model is an OCI artifact.
    expect(changed.find((o) => o.kind === 'ModelArtifactBucket')?.spec).toEqual({
      oci: { repository: '198.19.254.1:5000/demo-models' },
    });
    const spec = changed.find((o) => o.kind === 'DeployedModel')?.spec as Record<string, Record<string, unknown>>;
    expect(spec.artifactUri).toBe('gs://demo-models/iris/1');
    expect(spec.containerSpec).toMatchObject({
      imageUri: IMAGE,
      ports: [{ containerPort: 8080 }],
      predictRoute: '/predict',
      healthRoute: '/health',
      startupProbe: { httpGet: { path: '/health' }, periodSeconds: 1, failureThreshold: 600 },
    });
    expect(spec.dedicatedResources).toMatchObject({
      machineSpec: { machineType: REAL_NODE_MACHINE_TYPE },
      minReplicaCount: 2,
      maxReplicaCount: 4,
    });
    // The original examples are not modified in place.
    const original = examples.find((o) => o.metadata.name === 'churn-xgb-v3')?.spec as Record<string, unknown>;
    expect(original.artifactUri).toBe('gs://crm-ml-models/churn-xgb/3');
  });
});

describe('withRealModel without the bucket map in the examples', () => {
  it('adds the entry for the artifact it serves', async () => {
    const examples = (await loadExampleObjects(defaultExamplesDir())).filter((o) => o.kind !== 'ModelArtifactBucket');
    const out = withRealModel(examples, IMAGE);
    expect(out.filter((o) => o.kind === 'ModelArtifactBucket')).toEqual([
      {
        apiVersion: 'prediction.endpoint-operator.dev/v1',
        kind: 'ModelArtifactBucket',
        metadata: { name: 'demo-models' },
        spec: { oci: { repository: '198.19.254.1:5000/demo-models' } },
      },
    ]);
  });
});

describe('realNodeCatalogueConfigMap', () => {
  it('holds a catalogue the operator accepts, whose real-node machine type carries the node selector and toleration', () => {
    const cm = realNodeCatalogueConfigMap('endpoint-operator-system');
    expect(cm.metadata).toEqual({ name: 'endpoint-operator-machine-types', namespace: 'endpoint-operator-system' });
    const parsed = parseMachineCatalogue(cm.data as Record<string, string>);
    if (!parsed.ok) throw new Error(parsed.problem);
    const type = parsed.catalogue.machineTypes[REAL_NODE_MACHINE_TYPE];
    expect(type?.nodeSelector).toEqual(ON_REAL_NODE.nodeSelector);
    expect(type?.tolerations).toEqual(ON_REAL_NODE.tolerations);
    // The built-in machine types are still there: the other examples keep their shapes.
    expect(parsed.catalogue.machineTypes['n1-standard-2']).toEqual({ cpu: '2', memory: '7680Mi' });
  });
});

describe('realModelEndpoint', () => {
  const model = (id: string): KubeObject => ({
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name: 'churn-xgb-v3' },
    spec: { containerSpec: { imageUri: IMAGE } },
    status: { id },
  });
  const endpoint = (split: Record<string, number>, url?: string): KubeObject => ({
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'churn' },
    spec: { trafficSplit: split },
    status: url === undefined ? {} : { url },
  });

  it('finds the endpoint whose split sends calls to the containerSpec model', () => {
    const url = 'https://localhost:8090/v1/projects/p/locations/l/endpoints/churn';
    expect(realModelEndpoint([endpoint({ '1': 100 }, url)], [model('5100')])).toBeUndefined();
    expect(realModelEndpoint([endpoint({ '5100': 100 })], [model('5100')])).toBeUndefined();
    expect(realModelEndpoint([endpoint({ '5100': 100 }, url)], [model('5100')])).toEqual({
      endpoint: 'churn',
      model: 'churn-xgb-v3',
      url,
    });
  });
});

describe('realModelLines', () => {
  const target = { endpoint: 'churn', model: 'churn-xgb-v3', url: 'https://localhost:8090/v1/x/endpoints/churn' };

  it("prints the answer beside scikit-learn's and the curl that repeats the call", () => {
    const lines = realModelLines(target, IMAGE, { status: 200, predictions: [0, 1, 2] }, [0, 1, 2]).join('\n');
    expect(lines).toContain('answered 200 with');
    expect(lines).toContain('predictions [0,1,2] (scikit-learn here: [0,1,2], the same)');
    expect(lines).toContain(`-d '${JSON.stringify({ instances: IRIS_INSTANCES })}'`);
    expect(lines).toContain(`${target.url}:predict`);
  });

  it('says so when the answer differs or is missing', () => {
    const lines = realModelLines(target, IMAGE, { status: 503 }, [0, 1, 2]).join('\n');
    expect(lines).toContain('answered 503 with');
    expect(lines).toContain('NOT the same');
  });
});
