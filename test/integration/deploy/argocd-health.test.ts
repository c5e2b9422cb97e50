/**
 * The Argo CD health scripts of deploy/argocd, in Argo CD's layout: every health_test.yaml case
 * (objects captured from the real kube-apiserver by test/integration/gitops/health.test.ts) run on
 * gopher-lua as Argo CD runs them; the same objects read by kstatus's rules and the Flux example's
 * CEL expressions agree with the reason table. The files alone: test/unit/deploy/argocd-health.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { REASON_READING, type Reason } from '../../../src/api/common/conditions.js';
import { argocdHealthKinds, customizationDir } from '../../../src/deploy/argocd-health.js';
import { ensureArgoHealth, runHealthScripts } from '../../support/argo-health.js';
import { REPO_ROOT } from '../../support/examples.js';
import { FLUX_HEALTH, fluxReadings, loadFluxHealthChecks } from '../../support/flux-health.js';
import { ensureGoBuild } from '../../../dev/cluster/go-build.js';
import { KSTATUS, kstatusOf } from '../../support/kstatus.js';

interface HealthTest { healthStatus: { status: string; message: string }; inputPath: string }
interface Captured {
  kind: string;
  metadata: { generation?: number; deletionTimestamp?: string };
  status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string; reason: Reason }> };
}

const dirs = argocdHealthKinds.map(({ group, kind }) => ({ group, kind, dir: customizationDir(REPO_ROOT, group, kind) }));
const cases = dirs.flatMap(({ kind, dir }) => {
  const tests = (yaml.load(readFileSync(join(dir, 'health_test.yaml'), 'utf8')) as { tests: HealthTest[] }).tests;
  // CORE_SCHEMA: timestamps stay strings, as sigs.k8s.io/yaml (Argo CD's loader) leaves them.
  return tests.map((t) => ({ kind, ...t, object: yaml.load(readFileSync(join(dir, t.inputPath), 'utf8'), { schema: yaml.CORE_SCHEMA }) as Captured }));
});
const state = (inputPath: string): string => inputPath.replace(/^testdata\/|\.yaml$/g, '');

let binary: string;
beforeAll(async () => {
  binary = await ensureArgoHealth();
  // Built on first use too (tools/kstatus, tools/flux-health): here, where a first build has the time it needs.
  await ensureGoBuild(KSTATUS);
  await ensureGoBuild(FLUX_HEALTH);
}, 600_000);

describe('Argo CD health scripts (deploy/argocd)', () => {
  it('every health_test.yaml case gives its healthStatus on gopher-lua, as Argo CD runs the script', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    const scripts = new Map(dirs.map(({ kind, dir }) => [kind, readFileSync(join(dir, 'health.lua'), 'utf8')]));
    const results = runHealthScripts(binary, cases.map((c) => ({ script: scripts.get(c.kind) ?? '', object: c.object })));
    cases.forEach((c, i) => expect(results[i], `${c.kind} ${c.inputPath}`).toEqual(c.healthStatus));
  });

  it('a condition type added later, or Reconciling/Stalled False instead of absent, does not change the answer', () => {
    const script = readFileSync(join(dirs[0]!.dir, 'health.lua'), 'utf8');
    const variants = cases.map((c) => {
      const object = structuredClone(c.object);
      const extra = [{ type: 'ModelServerWarmed', status: 'False', reason: 'Cold', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }];
      const absent = ['Reconciling', 'Stalled'].filter((t) => !(object.status?.conditions ?? []).some((x) => x.type === t));
      const falses = absent.map((type) => ({ type, status: 'False', reason: 'NotApplicable', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }));
      if (object.status) object.status.conditions = [...extra, ...(object.status.conditions ?? []), ...falses] as typeof object.status.conditions;
      return { script, object };
    });
    const results = runHealthScripts(binary, variants);
    cases.forEach((c, i) => expect(results[i], `${c.kind} ${c.inputPath}`).toEqual(c.healthStatus));
  });

  it('each captured state reads as the reason table says, for Argo CD, kstatus and the Flux example', async () => {
    const flux = await loadFluxHealthChecks();
    const readings = await kstatusOf(cases.map((c) => c.object));
    const fluxes = await fluxReadings(flux, cases.map((c) => c.object));
    for (const [i, c] of cases.entries()) {
      const kstatus = (): string | undefined => readings[i]?.status;
      const fluxReading = (): string | undefined => fluxes[i];
      const ready = c.object.status?.conditions?.find((x) => x.type === 'Ready');
      const what = `${c.kind} ${c.inputPath}`;
      const s = state(c.inputPath);
      if (s === 'deleting') {
        expect(kstatus(), what).toBe('Terminating');
        continue;
      }
      if (s === 'unobserved') {
        expect([kstatus(), fluxReading()], what).toEqual(['InProgress', 'InProgress']);
        continue;
      }
      const reading = REASON_READING[ready!.reason];
      expect({ argo: c.healthStatus.status, kstatus: kstatus(), flux: fluxReading() }, what)
        .toEqual({ argo: reading.argo, kstatus: reading.kstatus, flux: reading.kstatus });
    }
  });
});
