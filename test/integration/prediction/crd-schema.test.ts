/**
 * The prediction CRDs on a real kube-apiserver, without the webhook: the schema alone must accept
 * every valid example and refuse what it claims to enforce. This is where the patterns meet Go's
 * RE2 (`\p{Ll}`, `\p{Lo}`...) and `maxLength` meets the apiserver's rune counting.
 */
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { crdFor, crdName } from '../../../src/api/crd/generate.js';
import { deployedModelKind, predictionEndpointKind } from '../../../src/api/prediction/v1/kinds.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { loadExamples, type ExampleFile } from '../../support/examples.js';

const kinds = [predictionEndpointKind, deployedModelKind];

/** Rules the CRD schema carries (types, patterns, lengths, ranges); the others need the webhook. */
const ENFORCED_BY_SCHEMA = new Set([
  'pe-display-name-required',
  'pe-display-name-too-long',
  'pe-label-value-invalid-character',
  'pe-label-value-too-long',
  'pe-too-many-labels',
  'pe-traffic-split-value-out-of-range',
  'pe-traffic-split-value-not-integer',
  'pe-network-project-id',
  'pe-network-project-number-leading-zero',
  'pe-sampling-rate-zero',
  'pe-sampling-rate-above-one',
  'pe-bigquery-uri-scheme',
  'pe-kms-key-name',
  'dm-endpoint-ref-required',
  'dm-endpoint-ref-name-invalid',
  'dm-model-required',
  'dm-model-format',
  'dm-id-format',
  'dm-display-name-too-long',
  'dm-dedicated-min-replicas-zero',
  'dm-machine-type-required',
  'dm-automatic-min-replicas-zero',
  'dm-backend-service-name-invalid',
  'dm-backend-protocol-unknown',
  'dm-backend-protocol-required',
  'dm-backend-model-name-invalid',
  'dm-backend-url-scheme',
]);

function inNamespace(file: ExampleFile, namespace: string): string {
  return file.documents
    .map((d) => {
      const obj = structuredClone(d.object) as { metadata: Record<string, unknown> };
      obj.metadata = { ...obj.metadata, namespace };
      return yaml.dump(obj);
    })
    .join('---\n');
}

/** The apiserver writes map entries as `spec.labels.team`; the validators as `spec.labels[team]`. */
function apiserverForms(field: string): string[] {
  return [field, field.replace(/\[([^\]]*)\]/g, '.$1')];
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
    if ((await kubectl(['get', 'pe,dm', '-n', namespace])).code === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});

describe('prediction CRDs on the apiserver', () => {
  const valid = loadExamples('valid').filter((f) => f.path.startsWith('examples/valid/prediction/'));
  const invalid = loadExamples('invalid').filter((f) => f.path.startsWith('examples/invalid/prediction/'));

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
    const obj = { apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'PredictionEndpoint', metadata: { name: 'emoji', namespace }, spec: { displayName: '🚀'.repeat(128) } };
    const r = await kubectl(['create', '-f', '-'], { input: JSON.stringify(obj) });
    expect(r.code, r.stderr).toBe(0);
  });

  const schemaRules = invalid.filter((f) => ENFORCED_BY_SCHEMA.has(f.path.replace(/^.*\//, '').replace(/\.yaml$/, '')));

  it('has an example for every rule the schema claims', () => {
    expect(schemaRules).toHaveLength(ENFORCED_BY_SCHEMA.size);
  });

  it.each(schemaRules.map((f) => [f.path, f] as const))('refuses %s at its field', async (_path, file) => {
    // --validate=false: the server's schema must refuse it, not kubectl's copy of it.
    const r = await kubectl(['create', '--validate=false', '-f', '-'], { input: inNamespace(file, namespace) });
    expect(r.code).not.toBe(0);
    const forms = apiserverForms(file.expectField ?? '');
    expect(forms.some((f) => r.stderr.includes(f)), `${forms.join(' or ')} in: ${r.stderr}`).toBe(true);
  });
});
