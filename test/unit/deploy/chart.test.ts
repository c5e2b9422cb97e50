/**
 * Checks of the Helm chart without a Helm binary: its values.yaml is DeployValues' defaults, its crds/
 * are the generated ones, and every template is well-formed YAML once the template actions are
 * neutralised (control lines dropped, every other `{{ ... }}` replaced by a placeholder). The
 * untemplated parts (RBAC rules, kinds and names) are compared with the generator.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { deployManifests } from '../../../src/deploy/manifests.js';
import { gatewayRules } from '../../../src/deploy/gateway.js';
import { clusterRules, operatorNamespaceRules, signinNamespaceRules } from '../../../src/deploy/rbac.js';
import { DEFAULT_DEPLOY_VALUES, type DeployValues } from '../../../src/deploy/values.js';
import { CHART_CRDS_DIR } from '../../../src/deploy/write.js';
import { REPO_ROOT } from '../../support/examples.js';
import { MiniHelm } from './mini-helm.js';

const CHART = join(REPO_ROOT, 'charts/endpoint-operator');
const PLACEHOLDER = 'TEMPLATED';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; rules?: unknown };

/**
 * Drops lines that are only control actions (if/else/end/range/with/define, comments); a line that
 * is only an include/toYaml action (it expands to mapping entries) becomes one placeholder entry;
 * every other action becomes a placeholder scalar.
 */
function neutralise(template: string): string {
  let n = 0;
  return template
    .split('\n')
    .filter((line) => !/^\s*\{\{-?\s*(if|else|end|range|with|define|\/\*)[\s\S]*\}\}\s*$/.test(line))
    .map((line) => line.replace(/^(\s*)\{\{-?\s*(include|toYaml)\b[^}]*\}\}\s*$/, (_, indent: string) => `${indent}templated-${++n}: ${PLACEHOLDER}`))
    .map((line) => line.replace(/\{\{-?[\s\S]*?-?\}\}/g, PLACEHOLDER))
    .join('\n');
}

function templates(): { name: string; docs: Doc[] }[] {
  return readdirSync(join(CHART, 'templates'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((name) => ({ name, docs: (yaml.loadAll(neutralise(readFileSync(join(CHART, 'templates', name), 'utf8'))) as (Doc | null)[]).filter((d): d is Doc => d !== null) }));
}

describe('the Helm chart', () => {
  it('has values.yaml equal to the generator defaults', () => {
    expect(yaml.load(readFileSync(join(CHART, 'values.yaml'), 'utf8'))).toEqual(DEFAULT_DEPLOY_VALUES);
  });

  it('has Chart.yaml apiVersion v2 with the package version as appVersion', () => {
    const chart = yaml.load(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'endpoint-operator', appVersion: pkg.version });
    expect(DEFAULT_DEPLOY_VALUES.image.tag).toBe(pkg.version);
  });

  it('ships crds/ identical to the generated crds/', () => {
    const generated = readdirSync(join(REPO_ROOT, 'crds')).sort();
    expect(readdirSync(join(REPO_ROOT, CHART_CRDS_DIR)).sort()).toEqual(generated);
    for (const f of generated) expect(readFileSync(join(REPO_ROOT, CHART_CRDS_DIR, f), 'utf8'), f).toBe(readFileSync(join(REPO_ROOT, 'crds', f), 'utf8'));
  });

  it('has templates that parse as YAML, each document a Kubernetes object', () => {
    for (const t of templates()) {
      expect(t.docs.length, t.name).toBeGreaterThan(0);
      for (const d of t.docs) expect(typeof d.apiVersion === 'string' && typeof d.kind === 'string' && typeof d.metadata?.name === 'string', `${t.name}: ${JSON.stringify(d).slice(0, 80)}`).toBe(true);
    }
  });

  it('renders the same objects as the generator with every option on (CRDs come from crds/)', () => {
    const all = deployManifests({
      ...DEFAULT_DEPLOY_VALUES,
      signin: { ...DEFAULT_DEPLOY_VALUES.signin, enabled: true },
      serviceMonitor: { enabled: true },
      gateway: { ...DEFAULT_DEPLOY_VALUES.gateway, networkPolicy: { ...DEFAULT_DEPLOY_VALUES.gateway.networkPolicy, enabled: true } },
    });
    const expected = all.filter((m) => m.kind !== 'CustomResourceDefinition').map((m) => `${m.kind}/${m.kind === 'Namespace' ? PLACEHOLDER : m.metadata.name}`).sort();
    const rendered = templates().flatMap((t) => t.docs.map((d) => `${d.kind}/${d.metadata.name}`)).sort();
    expect(rendered).toEqual(expected);
  });

  it('grants exactly the generator RBAC rules', () => {
    const roles = templates().flatMap((t) => t.docs).filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role');
    const rulesOf = (kind: string, name: string): unknown => roles.find((r) => r.kind === kind && r.metadata.name === name)?.rules;
    expect(rulesOf('ClusterRole', 'endpoint-operator')).toEqual(clusterRules());
    expect(rulesOf('Role', 'endpoint-operator')).toEqual(operatorNamespaceRules());
    expect(rulesOf('Role', 'endpoint-operator-signin')).toEqual(signinNamespaceRules());
    expect(rulesOf('ClusterRole', 'endpoint-operator-gateway')).toEqual(gatewayRules());
  });

  const helm = new MiniHelm(readFileSync(join(CHART, 'templates/_helpers.tpl'), 'utf8'));
  const render = (values: DeployValues): unknown[] =>
    readdirSync(join(CHART, 'templates'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .flatMap((f) => yaml.loadAll(helm.render(readFileSync(join(CHART, 'templates', f), 'utf8'), values)))
      .filter((d) => d !== null && d !== undefined);
  const sortKey = (o: unknown): string => { const d = o as Doc; return `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`; };
  const generated = (values: DeployValues): unknown[] => deployManifests(values).filter((m) => m.kind !== 'CustomResourceDefinition').map((m) => JSON.parse(JSON.stringify(m)) as unknown);

  it.each([
    ['the default values (what deploy/endpoint-operator.yaml holds)', DEFAULT_DEPLOY_VALUES],
    ['sign-in, ServiceMonitor, another namespace and image', { ...DEFAULT_DEPLOY_VALUES, namespace: 'ops', replicas: 3, leaderElection: false, image: { repository: 'registry.example.com/eo', tag: '1.2.3', pullPolicy: 'Always' as const }, reservedPrefixes: ['a.example.com'], signin: { enabled: true, namespace: 'shops', port: 9443 }, serviceMonitor: { enabled: true }, podDisruptionBudget: { minAvailable: 2 }, gateway: { replicas: 3, url: 'https://predict.example.com', resources: DEFAULT_DEPLOY_VALUES.gateway.resources, networkPolicy: { enabled: true, clientNamespaceLabel: 'example.com/ml-clients' } } }],
  ])('renders (by a Go-template subset evaluator) exactly the generator objects for %s', (_, values) => {
    const byKey = (a: unknown, b: unknown): number => sortKey(a).localeCompare(sortKey(b));
    expect(render(values).sort(byKey)).toEqual(generated(values).sort(byKey));
  });
});
