/**
 * The Helm chart, judged by Helm itself (3 and 4, test/support/helm.ts): `helm lint --strict` passes, and
 * `helm template` at its default values renders exactly the objects of deploy/endpoint-operator.yaml, and with
 * every option on exactly what the generator makes of the same values. The comparisons run over whatever objects
 * the generator makes, so a new object needs no change here, only in the chart.
 */
import { cpSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployManifests } from '../../../src/deploy/manifests.js';
import { DEFAULT_DEPLOY_VALUES, type DeployValues } from '../../../src/deploy/values.js';
import { crdTemplate, crdTemplateFile, KEEP_ANNOTATION } from '../../../src/deploy/crd-templates.js';
import { DEPLOY_FILE } from '../../../src/deploy/write.js';
import { allKinds } from '../../../src/api/kinds.js';
import { artifactBucketKind } from '../../../src/api/prediction/v1/artifact-bucket.js';
import { REPO_ROOT } from '../../support/examples.js';
import { ensureHelm, helm, renderChart, renderNotes, type RenderedChart } from '../../support/helm.js';
import { EVERY_OPTION_ON } from './chart-values.js';

const CHART = join(REPO_ROOT, 'charts/endpoint-operator');
const ARTIFACT_BUCKET_API = `${artifactBucketKind.group}/v1/${artifactBucketKind.kind}`;

type Obj = { kind: string; metadata: { name: string; namespace?: string } };
const keyOf = (o: unknown): string => {
  const d = o as Obj;
  return `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
};
const byKey = (objects: unknown[]): unknown[] => [...objects].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
const isCrd = (o: unknown): boolean => (o as Obj).kind === 'CustomResourceDefinition';

/** The generator's objects for `values` as plain JSON (what the chart's YAML decodes to). */
const generated = (values: DeployValues): unknown[] => deployManifests(values).map((m) => JSON.parse(JSON.stringify(m)) as unknown);

describe('the Helm chart', () => {
  let renderer: string;
  let helm4: string;
  beforeAll(async () => {
    // Built from the Go module proxy on a fresh machine: minutes, once.
    [renderer, helm4] = await Promise.all([ensureHelm(3), ensureHelm(4)]);
  }, 900_000);

  it('passes helm lint --strict, with Helm 3 and Helm 4, at its defaults and with every option on', async () => {
    for (const binary of [renderer, helm4]) {
      const lint = await helm(binary, ['lint', '--strict', CHART]);
      expect(lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      const dir = await mkdtemp(join(tmpdir(), 'eo-lint-'));
      try {
        await writeFile(join(dir, 'values.yaml'), yaml.dump(EVERY_OPTION_ON));
        const all = await helm(binary, ['lint', '--strict', CHART, '-f', join(dir, 'values.yaml')]);
        expect(all.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('renders the CRDs as the generator makes them with crds.keep off, and none with crds.enabled off', async () => {
    for (const crds of [{ enabled: true, keep: false }, { enabled: false, keep: true }]) {
      const values: DeployValues = { ...DEFAULT_DEPLOY_VALUES, crds };
      const chart = await renderChart(renderer, CHART, { crds });
      expect(byKey(chart.manifests.map((m) => m.object)), JSON.stringify(crds)).toEqual(byKey(generated(values)));
    }
    const kept = (await renderChart(helm4, CHART, {})).manifests.filter((m) => isCrd(m.object));
    expect(kept).toHaveLength(allKinds.length);
    for (const m of kept) expect((m.object as { metadata: { annotations?: unknown } }).metadata.annotations, m.template).toEqual(KEEP_ANNOTATION);
  });

  it('prints a `{{` of a CRD text as it is, not as a template action', async () => {
    const [def] = allKinds;
    if (def === undefined) throw new Error('no kinds');
    const description = 'A {{ .Values.namespace }} and {{- end }} are text here.';
    const dir = await mkdtemp(join(tmpdir(), 'eo-crd-braces-'));
    try {
      cpSync(CHART, dir, { recursive: true });
      await writeFile(join(dir, 'templates', crdTemplateFile(def)), crdTemplate({ ...def, description }));
      const crd = (await renderChart(renderer, dir, {})).manifests.find((m) => m.template === `templates/${crdTemplateFile(def)}`);
      const versions = (crd?.object as { spec: { versions: { schema: { openAPIV3Schema: { description: string } } }[] } }).spec.versions;
      expect(versions.map((v) => v.schema.openAPIV3Schema.description)).toEqual(def.versions.map(() => description));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(`installs at its default values exactly the objects of ${DEPLOY_FILE}`, async () => {
    const deployFile = (yaml.loadAll(readFileSync(join(REPO_ROOT, DEPLOY_FILE), 'utf8')) as unknown[]).filter((d) => d !== null && d !== undefined);
    for (const binary of [renderer, helm4]) {
      const chart = await renderChart(binary, CHART, {}); // no values: `helm template --include-crds`
      expect(chart.crds).toEqual([]);
      expect(chart.manifests.filter((m) => isCrd(m.object))).toHaveLength(allKinds.length);
      expect(byKey([...chart.crds, ...chart.manifests.map((m) => m.object)])).toEqual(byKey(deployFile));
    }
  });

  it('renders the generator objects with the request log sink set and tracing off (the gateway env alone)', async () => {
    const values: DeployValues = { ...DEFAULT_DEPLOY_VALUES, gateway: { ...DEFAULT_DEPLOY_VALUES.gateway, requestLogSink: 'http://collector.logging:8080/' } };
    const chart = await renderChart(renderer, CHART, { gateway: { requestLogSink: 'http://collector.logging:8080/' } });
    expect(byKey(chart.manifests.map((m) => m.object))).toEqual(byKey(generated(values)));
  });

  it("renders the generator objects with the write API off: the gateway's ServiceAccount writes nothing, and is told so", async () => {
    const gateway = { ...DEFAULT_DEPLOY_VALUES.gateway, apiWrites: { enabled: false } };
    const chart = await renderChart(renderer, CHART, { gateway: { apiWrites: { enabled: false } } });
    expect(byKey(chart.manifests.map((m) => m.object))).toEqual(byKey(generated({ ...DEFAULT_DEPLOY_VALUES, gateway })));
    expect(JSON.stringify(chart.manifests)).toContain('--api-writes=false');
  });

  it('renders the generator objects with the autoscaler off: the Deployment keeps gateway.replicas', async () => {
    const gateway = { ...DEFAULT_DEPLOY_VALUES.gateway, replicas: 3, autoscaling: { ...DEFAULT_DEPLOY_VALUES.gateway.autoscaling, enabled: false } };
    const chart = await renderChart(renderer, CHART, { gateway: { replicas: 3, autoscaling: { enabled: false } } });
    expect(byKey(chart.manifests.map((m) => m.object))).toEqual(byKey(generated({ ...DEFAULT_DEPLOY_VALUES, gateway })));
  });

  it('refuses values that values.schema.json does not allow, naming the key, with Helm 3 and Helm 4', async () => {
    const refusals: [unknown, RegExp][] = [
      // A misspelt key beside the right ones.
      [{ gateway: { replcias: 3 } }, /replcias/],
      [{ gateway: { autoscaling: { minReplica: 3 } } }, /minReplica/],
      // A value of the wrong kind, and one outside its enum.
      [{ gateway: { autoscaling: { maxReplicas: 'ten' } } }, /maxReplicas/],
      [{ image: { pullPolicy: 'Sometimes' } }, /pullPolicy/],
    ];
    for (const binary of [renderer, helm4]) {
      for (const [values, names] of refusals) {
        const refused = await renderChart(binary, CHART, values).then(
          () => 'rendered',
          (e: unknown) => String((e as { stderr?: string }).stderr ?? e),
        );
        expect(refused, JSON.stringify(values)).toMatch(/values don't meet the specifications of the schema/);
        expect(refused, JSON.stringify(values)).toMatch(names);
      }
    }
  });

  describe('with every option on', () => {
    let chart: RenderedChart;
    const release = { name: 'endpoint-operator', namespace: EVERY_OPTION_ON.namespace };
    beforeAll(async () => {
      // As every upgrade renders it: the cluster serves ModelArtifactBucket (the CRDs of the release before).
      chart = await renderChart(renderer, CHART, EVERY_OPTION_ON, release, [ARTIFACT_BUCKET_API]);
    });

    it('renders the bucket map as a post-install hook owned by the release while the cluster lacks the kind (a first install)', async () => {
      const first = await renderChart(renderer, CHART, EVERY_OPTION_ON, release);
      const buckets = first.manifests.map((m) => m.object as Obj & { metadata: { labels?: object; annotations?: object } }).filter((o) => o.kind === artifactBucketKind.kind);
      expect(buckets.map((b) => b.metadata.name).sort()).toEqual(Object.keys(EVERY_OPTION_ON.modelArtifactBuckets).sort());
      for (const b of buckets) {
        expect(b.metadata.annotations).toEqual({ 'helm.sh/hook': 'post-install', 'meta.helm.sh/release-name': release.name, 'meta.helm.sh/release-namespace': release.namespace });
        expect(b.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'Helm' });
      }
      const others = (objects: unknown[]): unknown[] => byKey(objects.filter((o) => (o as Obj).kind !== artifactBucketKind.kind));
      expect(others(first.manifests.map((m) => m.object))).toEqual(others(generated(EVERY_OPTION_ON)));
    });

    it('renders exactly the generator objects for the same values, CRDs included (their conversion webhook in the chosen namespace)', () => {
      expect(byKey(chart.manifests.map((m) => m.object))).toEqual(byKey(generated(EVERY_OPTION_ON)));
    });

    it('names every object once', () => {
      const keys = chart.manifests.map((m) => keyOf(m.object));
      expect(new Set(keys).size).toBe(keys.length);
    });

    it('prints NOTES.txt with the chart version and the chosen namespace', async () => {
      const notes = await renderNotes(helm4, CHART, EVERY_OPTION_ON, { name: 'endpoint-operator', namespace: EVERY_OPTION_ON.namespace });
      expect(notes).toContain(`endpoint-operator ${DEFAULT_DEPLOY_VALUES.image.tag} is installed in namespace ops`);
      expect(notes).toContain('kubectl -n NS create token CALLER --audience endpoint-operator-gateway');
      expect(notes).toContain('bind ClusterRole endpoint-operator-metrics-reader');
    });
  });
});
