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
import { REPO_ROOT } from '../../support/examples.js';
import { ensureHelm, helm, renderChart, renderNotes, type RenderedChart } from '../../support/helm.js';

const CHART = join(REPO_ROOT, 'charts/endpoint-operator');

type Obj = { kind: string; metadata: { name: string; namespace?: string } };
const keyOf = (o: unknown): string => {
  const d = o as Obj;
  return `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
};
const byKey = (objects: unknown[]): unknown[] => [...objects].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
const isCrd = (o: unknown): boolean => (o as Obj).kind === 'CustomResourceDefinition';

/** Every `enabled: false` switch turned on, wherever it sits in the values. */
function everySwitchOn(values: unknown): unknown {
  if (Array.isArray(values) || values === null || typeof values !== 'object') return values;
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, k === 'enabled' && v === false ? true : everySwitchOn(v)]));
}

const EVERY_OPTION_ON = {
  ...(everySwitchOn(DEFAULT_DEPLOY_VALUES) as DeployValues),
  namespace: 'ops',
  replicas: 3,
  leaderElection: false,
  image: { repository: 'registry.example.com/eo', tag: '1.2.3', pullPolicy: 'Always' as const },
  project: 'acme',
  location: 'europe-west4',
  reservedPrefixes: ['a.example.com', 'b.example.com'],
  podDisruptionBudget: { minAvailable: 2 },
  nodeSelector: { 'example.com/pool': 'system' },
  tolerations: [{ key: 'example.com/dedicated', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
  tracing: { otlpEndpoint: 'http://otel-collector.monitoring:4318', sampler: 'always_on', samplerArg: '1' },
  // A metrics scraper's pods (keys out of order: the flag carries them sorted, as Helm's toJson writes them).
  modelNetworkPolicy: { enabled: true, extraIngressFrom: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } }, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
  // The bucket map: one object per bucket, both forms.
  modelArtifactBuckets: { 'demo-models': { oci: { repository: 'registry.example.com/demo-models' } }, 'shared-store': { pvc: { claimName: 'model-store' } } },
  // Limits off their defaults, with counts of a million and more (Helm reads them as float64) and fractional seconds.
  signin: {
    enabled: true, namespace: 'shops', port: 9443, trustedProxies: '10.0.0.0/8,fd00::/8',
    limits: { headersTimeoutSeconds: 2.5, requestTimeoutSeconds: 20, keepAliveTimeoutSeconds: 4, maxConnections: 2_000_000, verifyConcurrency: 3, verifyPerClient: 2, verifyQueue: 64 },
  },
  gateway: {
    ...(everySwitchOn(DEFAULT_DEPLOY_VALUES) as DeployValues).gateway, replicas: 3, url: 'https://predict.example.com', requestLogSink: 'http://broker-ingress.knative-eventing.svc/ml/default', networkPolicy: { enabled: true, clientNamespaceLabel: 'example.com/ml-clients' },
    limits: { headersTimeoutSeconds: 5, requestTimeoutSeconds: 120, keepAliveTimeoutSeconds: 30, maxConnections: 10_000, maxCallsPerCaller: 16, maxBodyBytesPerCaller: 12_000_000 },
    nodeSelector: { 'example.com/pool': 'serving' },
    podDisruptionBudget: { minAvailable: 2 },
    tolerations: [{ key: 'example.com/dedicated', operator: 'Equal' as const, value: 'serving', effect: 'NoSchedule' as const }],
  },
};

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

  describe('with every option on', () => {
    let chart: RenderedChart;
    beforeAll(async () => {
      chart = await renderChart(renderer, CHART, EVERY_OPTION_ON, { name: 'endpoint-operator', namespace: EVERY_OPTION_ON.namespace });
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
