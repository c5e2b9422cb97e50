/** The committed deploy/endpoint-operator.yaml against a real API server: every object is admissible. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { deployManifests } from '../../../src/deploy/manifests.js';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';
import { kubectl } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';

type Doc = { apiVersion: string; kind: string; metadata: { name: string } };

const docs = yaml.loadAll(readFileSync(join(REPO_ROOT, 'deploy/endpoint-operator.yaml'), 'utf8')) as Doc[];

describe('deploy/endpoint-operator.yaml', () => {
  it('passes server-side dry-run apply', async () => {
    const versions = await kubectl(['api-versions']);
    expect(versions.code, versions.stderr).toBe(0);
    const served = new Set(versions.stdout.split('\n').map((l) => l.trim()));
    // Every object is checked: the supported releases serve every API version the install uses.
    const checkable = docs;
    expect(docs.filter((d) => !served.has(d.apiVersion)).map((d) => `${d.apiVersion}/${d.kind}`)).toEqual([]);

    // A dry-run of namespaced objects needs their namespace to exist: create it for real (idempotent).
    const ns = docs.find((d) => d.kind === 'Namespace');
    expect(ns).toBeDefined();
    const created = await kubectl(['apply', '-f', '-'], { input: yaml.dump(ns) });
    expect(created.code, created.stderr).toBe(0);

    // What a fresh install stores: objects that other test files already created (the CRDs, installed with a
    // URL conversion webhook) are dry-run replaced, not applied, because apply would merge this file's
    // fields into theirs (a CRD with both `url` and `service`) and judge an object no install produces.
    const exists = await Promise.all(checkable.map(async (d) => (await kubectl(['get', '-f', '-', '-o', 'name'], { input: yaml.dump(d) })).code === 0));
    const fresh = checkable.filter((_, i) => !exists[i]);
    const existing = checkable.filter((_, i) => exists[i]);
    let stdout = '';
    for (const [verb, objects] of [['create', fresh], ['replace', existing]] as const) {
      if (objects.length === 0) continue;
      const r = await kubectl([verb, '--dry-run=server', '-f', '-'], { input: objects.map((d) => yaml.dump(d)).join('---\n'), timeoutMs: 90_000 });
      expect(r.code, `${verb}: ${r.stdout}\n${r.stderr}`).toBe(0);
      stdout += r.stdout;
    }
    for (const d of checkable) expect(stdout, `${d.kind}/${d.metadata.name}`).toContain(`${d.metadata.name} `);
    expect(stdout.match(/\(server dry run\)/g)?.length).toBe(checkable.length);
  });
});

describe('the NetworkPolicies with a client namespace label and the scraper named', () => {
  it('pass server-side dry-run apply', async () => {
    const values = {
      ...DEFAULT_DEPLOY_VALUES,
      networkPolicy: { enabled: true, webhookFrom: [{ ipBlock: { cidr: '10.0.0.0/24' } }], metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }] },
      gateway: { ...DEFAULT_DEPLOY_VALUES.gateway, networkPolicy: { enabled: true, clientNamespaceLabel: 'example.com/ml-clients' } },
    };
    const policies = deployManifests(values).filter((m) => m.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual(['endpoint-operator', 'endpoint-operator-gateway']);
    const r = await kubectl(['apply', '--dry-run=server', '--validate=false', '-f', '-'], { input: policies.map((d) => yaml.dump(d)).join('---\n') });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    for (const name of ['endpoint-operator', 'endpoint-operator-gateway']) expect(r.stdout).toContain(`networkpolicy.networking.k8s.io/${name} created (server dry run)`);
  });
});
