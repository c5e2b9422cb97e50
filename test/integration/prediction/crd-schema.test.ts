/**
 * The prediction CRDs on a real kube-apiserver, without the webhook: the valid examples, the printer
 * columns, and `maxLength` meeting the apiserver's rune counting. What the CRDs refuse by themselves is
 * test/integration/webhook/apiserver-alone.test.ts.
 */
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { crdFor, crdName } from '../../../src/api/crd/generate.js';
import { deployedModelKind, modelKind, predictionEndpointKind } from '../../../src/api/prediction/v1/kinds.js';
import { artifactBucketKind } from '../../../src/api/prediction/v1/artifact-bucket.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { loadExamples, type ExampleFile } from '../../support/examples.js';

// Every prediction kind the valid examples hold (the bucket map is cluster-scoped: its namespace is ignored).
const kinds = [predictionEndpointKind, deployedModelKind, modelKind, artifactBucketKind];

function inNamespace(file: ExampleFile, namespace: string): string {
  return file.documents
    .map((d) => {
      const obj = structuredClone(d.object) as { metadata: Record<string, unknown> };
      obj.metadata = { ...obj.metadata, namespace };
      return yaml.dump(obj);
    })
    .join('---\n');
}

let namespace = '';

beforeAll(async () => {
  for (const def of kinds) {
    const applied = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(crdFor(def)) });
    if (applied.code !== 0) throw new Error(`applying ${crdName(def)} failed: ${applied.stderr}`);
  }
  for (const def of kinds) {
    const waited = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crdName(def)}`]);
    if (waited.code !== 0) throw new Error(`${crdName(def)} not Established: ${waited.stderr}`);
  }
  namespace = await createTestNamespace('prediction-crd');
  // Discovery can lag Established by a moment.
  for (let i = 0; i < 100; i++) {
    if ((await kubectl(['get', 'pe,dm,models,modelartifactbuckets', '-n', namespace])).code === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});

describe('prediction CRDs on the apiserver', () => {
  const valid = loadExamples('valid').filter((f) => f.path.startsWith('examples/valid/prediction/'));

  it.each(valid.map((f) => [f.path, f] as const))('accepts %s', async (_path, file) => {
    const r = await kubectl(['apply', '-f', '-'], { input: inNamespace(file, namespace) });
    expect(r.code, r.stderr).toBe(0);
  });

  it('shows the printer columns', async () => {
    const pe = await kubectl(['get', 'predictionendpoints', '-n', namespace]);
    expect(pe.code, pe.stderr).toBe(0);
    expect(pe.stdout.split('\n')[0]).toMatch(/NAME\s+DISPLAY NAME\s+MODELS\s+READY\s+REASON\s+AGE/);
    expect(pe.stdout).toContain('fraud-scoring');
    const dm = await kubectl(['get', 'dm', '-n', namespace]);
    expect(dm.stdout.split('\n')[0]).toMatch(/NAME\s+ENDPOINT\s+MODEL\s+ID\s+READY\s+REASON\s+AGE/);
    const category = await kubectl(['get', 'endpoint-operator', '-n', namespace, '-o', 'name']);
    expect(category.stdout).toContain('predictionendpoint.prediction.endpoint-operator.dev/fraud-scoring');
  });

  it('counts displayName in characters as the validator does: 128 emoji are accepted', async () => {
    const obj = {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name: 'emoji', namespace },
      spec: { displayName: '🚀'.repeat(128) },
    };
    const r = await kubectl(['create', '-f', '-'], { input: JSON.stringify(obj) });
    expect(r.code, r.stderr).toBe(0);
  });
});
