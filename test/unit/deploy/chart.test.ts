/**
 * The Helm chart's files as the generator writes them, read without Helm: values.yaml, Chart.yaml and the CRD
 * templates. Helm's own judgement (lint, template, NOTES.txt) is test/integration/deploy/chart.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { RELEASES } from '../../../dev/cluster/binaries.js';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';
import { deployValuesSchema } from '../../../src/deploy/values-schema.js';
import { crdTemplate, crdTemplateFile } from '../../../src/deploy/crd-templates.js';
import { CHART_TEMPLATES_DIR } from '../../../src/deploy/write.js';
import { allKinds } from '../../../src/api/kinds.js';
import { crdFileName } from '../../../src/api/crd/generate.js';
import { REPO_ROOT } from '../../support/examples.js';

const CHART = join(REPO_ROOT, 'charts/endpoint-operator');

describe('the Helm chart', () => {
  it('has values.yaml equal to the generator defaults', () => {
    expect(yaml.load(readFileSync(join(CHART, 'values.yaml'), 'utf8'))).toEqual(DEFAULT_DEPLOY_VALUES);
  });

  it('has values.yaml that its values.schema.json source accepts, and refuses a misspelt key by its path', () => {
    const values = yaml.load(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    expect(deployValuesSchema.safeParse(values).error).toBeUndefined();
    const misspelt = deployValuesSchema.safeParse({ ...DEFAULT_DEPLOY_VALUES, gateway: { ...DEFAULT_DEPLOY_VALUES.gateway, replcias: 3 } });
    expect(misspelt.error?.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['replcias'], path: ['gateway'] })]);
  });

  it('has Chart.yaml apiVersion v2 with the package version as appVersion', () => {
    const chart = yaml.load(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'endpoint-operator', appVersion: pkg.version });
    expect(DEFAULT_DEPLOY_VALUES.image.tag).toBe(pkg.version);
    // Helm refuses a cluster older than the supported range's oldest release (the compatibility run's).
    const oldest = RELEASES.map((r) => r.minor).sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))[0];
    expect(chart['kubeVersion']).toBe(`>=${oldest ?? ''}.0-0`);
  });

  it('ships every CRD of crds/ as a generated template, and no crds/ directory, which Helm would never upgrade', () => {
    expect(existsSync(join(CHART, 'crds'))).toBe(false);
    expect(allKinds.map((def) => crdFileName(def)).sort()).toEqual(readdirSync(join(REPO_ROOT, 'crds')).sort());
    const templates = readdirSync(join(REPO_ROOT, CHART_TEMPLATES_DIR)).filter((f) => f.startsWith('crd-'));
    expect(templates.sort()).toEqual(allKinds.map((def) => crdTemplateFile(def)).sort());
    for (const def of allKinds) expect(readFileSync(join(REPO_ROOT, CHART_TEMPLATES_DIR, crdTemplateFile(def)), 'utf8'), crdTemplateFile(def)).toBe(crdTemplate(def));
  });
});
