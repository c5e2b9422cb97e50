import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allKinds } from '../../../src/api/kinds.js';
import { crdFileName, crdFor, crdYaml } from '../../../src/api/crd/generate.js';
import { REPO_ROOT } from '../../support/examples.js';

const crdDir = join(REPO_ROOT, 'crds');

describe('crds/', () => {
  it('holds exactly one generated file per kind (run `npm run generate` after changing src/api)', () => {
    const files = readdirSync(crdDir)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(files).toEqual(allKinds.map(crdFileName).sort());
  });

  it.each(allKinds.map((k) => [k.kind, k] as const))('%s matches the schema in src/api (no drift)', (_kind, def) => {
    const committed = readFileSync(join(crdDir, crdFileName(def)), 'utf8');
    expect(committed, 'crds/ is stale: run `npm run generate` and commit the result').toBe(crdYaml(crdFor(def)));
  });
});

describe('generated CRDs', () => {
  // The reconciled kinds; the bucket map (ModelArtifactBucket) is read, never reconciled: no conditions to show.
  it.each(allKinds.filter((k) => k.scope !== 'Cluster').map((k) => [k.kind, k] as const))(
    '%s has status, printer columns, short names and the category',
    (_kind, def) => {
      const crd = crdFor(def);
      const versions = crd.spec.versions as {
        name: string;
        storage: boolean;
        subresources: unknown;
        additionalPrinterColumns: { name: string }[];
      }[];
      expect(versions.filter((v) => v.storage)).toHaveLength(1);
      for (const v of versions) {
        expect(v.subresources).toEqual({ status: {} });
        const columns = v.additionalPrinterColumns.map((c) => c.name);
        expect(columns).toEqual(expect.arrayContaining(['Ready', 'Reason', 'Age']));
      }
      expect((crd.spec.names as { categories: string[] }).categories).toContain('endpoint-operator');
    },
  );

  it('gives the prediction kinds their short names', () => {
    const shortNames = Object.fromEntries(allKinds.map((k) => [k.kind, k.shortNames]));
    expect(shortNames.PredictionEndpoint).toContain('pe');
    expect(shortNames.DeployedModel).toContain('dm');
  });

  it('serves RegistryEndpoint in v1 (storage) and v1beta1 through the conversion webhook', () => {
    const def = allKinds.find((k) => k.kind === 'RegistryEndpoint');
    expect(def).toBeDefined();
    const crd = crdFor(def!);
    expect((crd.spec.versions as { name: string; storage: boolean }[]).map((v) => [v.name, v.storage])).toEqual(
      expect.arrayContaining([
        ['v1', true],
        ['v1beta1', false],
      ]),
    );
    expect(crd.spec.conversion).toMatchObject({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } });
  });
});
