/**
 * The Argo CD health scripts of deploy/argocd as files: Argo CD's layout, one generic script,
 * argocd-cm-health.yaml as `npm run generate` makes it, and the Flux example's entries. The scripts run
 * on gopher-lua, kstatus and Flux's evaluator in test/integration/deploy/argocd-health.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { ARGOCD_CM_FILE, argocdCmYaml, argocdHealthKinds, customizationDir, healthKey } from '../../../src/deploy/argocd-health.js';
import { allKinds } from '../../../src/api/kinds.js';
import { REPO_ROOT } from '../../support/examples.js';
import { loadFluxHealthChecks } from '../../support/flux-health.js';

const dirs = argocdHealthKinds.map(({ group, kind }) => ({ group, kind, dir: customizationDir(REPO_ROOT, group, kind) }));

describe('Argo CD health scripts (deploy/argocd)', () => {
  it('exist for every kind with conditions, in Argo CD\'s layout, as one generic script', () => {
    expect(argocdHealthKinds.map((k) => k.kind).sort()).toEqual(['AdminUser', 'DeployedModel', 'Model', 'PredictionEndpoint', 'RegistryEndpoint', 'RegistryService', 'Shop', 'ShopUser']);
    const scripts = new Set(dirs.map(({ dir }) => readFileSync(join(dir, 'health.lua'), 'utf8')));
    expect(scripts.size).toBe(1);
    const [script = ''] = scripts;
    // Generic: it names the kstatus conditions and nothing kind-specific.
    expect(script).not.toMatch(/Reconciled|InvalidSpec|trafficSplit|PredictionEndpoint/);
    for (const { dir } of dirs) expect(existsSync(join(dir, 'testdata')), dir).toBe(true);
  });

  it(`${ARGOCD_CM_FILE} holds each script under resource.customizations.health.<group>_<Kind> (regenerate with npm run generate)`, async () => {
    const committed = readFileSync(join(REPO_ROOT, ARGOCD_CM_FILE), 'utf8');
    expect(committed).toBe(await argocdCmYaml(REPO_ROOT));
    const data = (yaml.load(committed) as { data: Record<string, string> }).data;
    expect(Object.keys(data).sort()).toEqual(argocdHealthKinds.map((k) => healthKey(k.group, k.kind)).sort());
  });

  it('the Flux example has a healthCheckExprs entry for every kind, at a served version', async () => {
    const flux = await loadFluxHealthChecks();
    for (const { group, kind } of argocdHealthKinds) {
      const served = allKinds.find((d) => d.kind === kind)?.versions.filter((v) => v.served).map((v) => `${group}/${v.name}`) ?? [];
      const entry = flux.find((f) => f.kind === kind);
      expect(entry, kind).toBeDefined();
      expect(served, kind).toContain(entry?.apiVersion);
    }
  });
});
