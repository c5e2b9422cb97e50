/**
 * The chart as the ecosystem judges charts: kube-score 1.20 (test/support/kube-score.ts) on what Helm renders at the
 * chart's defaults, with every option on (the values docs/install.md describes: NetworkPolicies naming client
 * namespaces and the scraper, sign-in, ServiceMonitor, alerts, tracing), and with the autoscaler off; and on the
 * examples (the gateway client's workload, the Flux Kustomization, the Argo CD health ConfigMap). No finding at WARNING or CRITICAL may
 * remain: each check the chart does not follow is answered on the object by kube-score's own ignore annotation, whose
 * reasons are written beside it (kubeScoreIgnore in src/deploy/workload.ts, the chart's _helpers.tpl).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';
import { ARGOCD_CM_FILE } from '../../../src/deploy/argocd-health.js';
import { REPO_ROOT } from '../../support/examples.js';
import { ensureHelm, renderChart } from '../../support/helm.js';
import { kubeScore } from '../../support/kube-score.js';
import { EVERY_OPTION_ON } from './chart-values.js';

const CHART = join(REPO_ROOT, 'charts/endpoint-operator');
/**
 * What users copy: every YAML file under examples/ but invalid/ (the gateway client's workload, the Flux
 * Kustomization, the valid objects of our kinds, which kube-score reads and does not score), and the Argo CD health
 * ConfigMap.
 */
function copiedExamples(): string[] {
  const files = readdirSync(join(REPO_ROOT, 'examples'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.ya?ml$/.test(f) && !f.startsWith('invalid/'))
    .map((f) => `examples/${f}`);
  return [...files.sort(), ARGOCD_CM_FILE];
}

describe('kube-score', () => {
  let helm4: string;
  beforeAll(async () => {
    helm4 = await ensureHelm(4); // built from the Go module proxy on a fresh machine: minutes, once
  }, 900_000);

  const cases: [string, unknown][] = [
    ['the defaults', {}],
    ['every option on', EVERY_OPTION_ON],
    ['the autoscaler off', { gateway: { autoscaling: { enabled: false } } }],
  ];
  it.each(cases)('finds nothing at WARNING or CRITICAL in the chart rendered with %s', async (_, values) => {
    const rendered = await renderChart(helm4, CHART, values);
    const objects = rendered.manifests.map((m) => m.object);
    expect(objects.filter((o) => (o as { kind: string }).kind === 'Deployment')).toHaveLength(2);
    expect(await kubeScore(objects)).toEqual([]);
  }, 900_000);

  it("finds nothing in the examples, the gateway client's workload among them", async () => {
    const files = copiedExamples();
    expect(files).toContain('examples/gateway-client/workload.yaml');
    expect(files).toContain('examples/flux/kustomization.yaml');
    const objects = files.flatMap((file) =>
      yaml.loadAll(readFileSync(join(REPO_ROOT, file), 'utf8')).filter((o) => o !== null && o !== undefined),
    );
    const kinds = objects.map((o) => (o as { kind: string }).kind);
    // The kinds kube-score has checks for are there to be scored: the check is not vacuous.
    expect(kinds).toEqual(expect.arrayContaining(['Deployment', 'NetworkPolicy']));
    expect(await kubeScore(objects)).toEqual([]);
  }, 900_000);

  it('reports what the ignore annotations answer once they are taken away: the check is real, not off', async () => {
    const rendered = await renderChart(helm4, CHART, {});
    const bare = rendered.manifests.map((m) => m.object as { kind: string; metadata: { annotations?: Record<string, string> } }).map((o) => {
      if (o.kind !== 'Deployment') return o;
      const { 'kube-score/ignore': _ignored, ...annotations } = o.metadata.annotations ?? {};
      return { ...o, metadata: { ...o.metadata, annotations } };
    });
    const found = (await kubeScore(bare)).map((f) => `${f.object} ${f.check} ${f.grade}`);
    const ns = DEFAULT_DEPLOY_VALUES.namespace;
    for (const name of ['endpoint-operator', 'endpoint-operator-gateway']) {
      expect(found).toContain(`Deployment/${ns}/${name} container-resources CRITICAL`);
      expect(found).toContain(`Deployment/${ns}/${name} container-image-pull-policy CRITICAL`);
      // Ingress is the chart's; egress is left to the cluster (kubeScoreIgnore says why): a WARNING, not CRITICAL.
      expect(found).toContain(`Deployment/${ns}/${name} pod-networkpolicy WARNING`);
    }
    expect(found).toHaveLength(6);
  }, 900_000);
});
