/**
 * GitOps tools' reading of live objects on the real kube-apiserver, every kind in every state
 * (states.ts): kstatus's documented rules (test/support/kstatus.ts, what Flux `wait` and kpt use),
 * the Argo CD health scripts of deploy/argocd run by gopher-lua as Argo CD runs them, and the Flux
 * healthCheckExprs of examples/flux evaluated by a CEL implementation. A spec change made while the
 * operator is stopped reads InProgress/Progressing until the operator observes it, then Current/Healthy.
 *
 * EO_CAPTURE_ARGO_TESTDATA=1 also writes each object, as `kubectl get -o yaml` prints it, to its
 * kind's deploy/argocd/.../testdata/<state>.yaml and the expected answers to health_test.yaml.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reasons } from '../../../src/api/common/conditions.js';
import { customizationDir } from '../../../src/deploy/argocd-health.js';
import { KubernetesIdentityDirectory } from '../../../src/signin/kube/directory.js';
import { signInControllers } from '../../../src/operator/signin-controllers.js';
import { EventRecorder } from '../../../src/runtime/events.js';
import { ensureArgoHealth, runHealthScripts } from '../../support/argo-health.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { fluxReadings, loadFluxHealthChecks, type FluxHealthCheck } from '../../support/flux-health.js';
import { kstatus, kstatusOf } from '../../support/kstatus.js';
import { createPasswordSecret } from '../signin/helpers.js';
import { apply, eventually, installCrds, runOperator, testClient, type TestOperator } from '../reconcilers/harness.js';
import { expected, foreignService, GROUP_OF, HOLD_FINALIZER, objects, scenarios, type Scenario } from './states.js';

const CAPTURE = process.env['EO_CAPTURE_ARGO_TESTDATA'] === '1';

interface Live {
  readonly metadata: { name: string; generation?: number; deletionTimestamp?: string; finalizers?: string[] };
  readonly status?: {
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; reason: string; message?: string; observedGeneration?: number }>;
  };
}

let ns: string;
let operator: TestOperator | undefined;
let signin: AbortController | undefined;
let argoHealth: string;
let flux: FluxHealthCheck[];
const scripts = new Map<string, string>();
/** Each scenario's object as kubectl printed it, in the state under test. */
const captured = new Map<Scenario, { yamlText: string; object: Live }>();

async function startSignInStatus(): Promise<void> {
  const stop = new AbortController();
  const client = testClient();
  const directory = new KubernetesIdentityDirectory({ client, namespace: ns });
  await directory.start(stop.signal);
  const events = new EventRecorder({ client, component: 'endpoint-operator' });
  const runs = signInControllers({ client, directory, events }).map((c) => c.run(stop.signal));
  void Promise.all(runs).finally(() => client.close());
  signin = stop;
}

async function getYaml(s: Scenario): Promise<{ yamlText: string; object: Live }> {
  const r = await kubectl(['get', s.resource, s.name, '-n', ns, '-o', 'yaml']);
  if (r.code !== 0) throw new Error(`kubectl get ${s.resource} ${s.name}: ${r.stderr}`);
  // CORE_SCHEMA: timestamps stay strings, as sigs.k8s.io/yaml (Argo CD's loader) leaves them.
  return { yamlText: r.stdout, object: yaml.load(r.stdout, { schema: yaml.CORE_SCHEMA }) as Live };
}

function condition(obj: Live, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type);
}

/** Argo CD's message for a scenario, computed here independently of the Lua script. */
function argoMessage(s: Scenario, obj: Live): string {
  const said = (c: { reason: string; message?: string }): string =>
    c.message ? `${c.reason}: ${c.message}` : c.reason;
  const ready = condition(obj, 'Ready');
  if (s.state === 'deleting')
    return ready && ready.status !== 'True' ? `Being deleted: ${said(ready)}` : 'Being deleted';
  if (s.state === 'unobserved') return `Waiting for the operator to observe generation ${obj.metadata.generation ?? 0}`;
  if (ready === undefined) throw new Error(`${s.name} has no Ready condition`);
  return said(ready);
}

async function readsReason(s: Scenario): Promise<Live> {
  return eventually(
    `${s.kind}/${s.name} Ready reason ${s.reason}`,
    async () => {
      const { object } = await getYaml(s);
      const ready = condition(object, 'Ready');
      return ready?.reason === s.reason && object.status?.observedGeneration === object.metadata.generation
        ? object
        : undefined;
    },
    60_000,
  );
}

beforeAll(async () => {
  const client = testClient();
  try {
    await installCrds(client);
  } finally {
    client.close();
  }
  ns = await createTestNamespace('gitops-health');
  argoHealth = await ensureArgoHealth();
  flux = await loadFluxHealthChecks();
  for (const kind of Object.keys(GROUP_OF))
    scripts.set(
      kind,
      await readFile(join(customizationDir(REPO_ROOT, GROUP_OF[kind] ?? '', kind), 'health.lua'), 'utf8'),
    );
  await createPasswordSecret(ns, 'strong-password', 'correct horse battery staple 42');
  await apply(
    ns,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'weak-password', labels: { 'pos.endpoint-operator.dev/password': 'true' } },
      stringData: { password: '$argon2id$v=19$m=1024,t=1,p=1$c29tZXNhbHQ$aGFzaGhhc2hoYXNoaGFzaA' },
    }),
  );
  await apply(ns, yaml.dump(foreignService));
  operator = await runOperator(ns);
  await startSignInStatus();
  await apply(
    ns,
    objects
      .map((o) =>
        yaml.dump({ apiVersion: `${GROUP_OF[o.kind]}/v1`, kind: o.kind, metadata: { name: o.name }, spec: o.spec }),
      )
      .join('---\n'),
  );
}, 300_000);

afterAll(async () => {
  signin?.abort();
  await operator?.stop();
});

describe('GitOps health of every kind in every state, on the real kube-apiserver', () => {
  it('each object reaches its state; deleting ones are held by a finalizer', async () => {
    for (const s of scenarios.filter((x) => x.state !== 'unobserved' && x.state !== 'deleting')) {
      await readsReason(s);
      captured.set(s, await getYaml(s));
    }
    for (const s of scenarios.filter((x) => x.state === 'deleting')) {
      await readsReason({ ...s, reason: Reasons.Reconciled });
      if (s.foreignFinalizer) {
        const patched = await kubectl([
          'patch',
          s.resource,
          s.name,
          '-n',
          ns,
          '--type=merge',
          '-p',
          JSON.stringify({ metadata: { finalizers: [HOLD_FINALIZER] } }),
        ]);
        expect(patched.code, patched.stderr).toBe(0);
      }
      const deleted = await kubectl(['delete', s.resource, s.name, '-n', ns, '--wait=false']);
      expect(deleted.code, deleted.stderr).toBe(0);
      const object = await eventually(
        `${s.name} deleting`,
        async () => {
          const { object } = await getYaml(s);
          return object.metadata.deletionTimestamp !== undefined && condition(object, 'Ready')?.reason === s.reason
            ? object
            : undefined;
        },
        60_000,
      );
      expect(object.metadata.deletionTimestamp).toBeDefined();
      captured.set(s, await getYaml(s));
    }
  }, 300_000);

  it('a spec change written while the operator is stopped reads InProgress/Progressing, then Current/Healthy once observed', async () => {
    const changed = scenarios.filter((s) => s.state === 'unobserved');
    for (const s of changed) await readsReason(s);
    signin?.abort();
    await operator?.stop();
    operator = undefined;
    for (const s of changed) {
      const r = await kubectl([
        'patch',
        s.resource,
        s.name,
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: s.specPatch }),
      ]);
      expect(r.code, r.stderr).toBe(0);
      const got = await getYaml(s);
      expect(got.object.metadata.generation, s.name).toBe(2);
      expect(got.object.status?.observedGeneration, s.name).toBe(1);
      expect((await kstatus({ kind: s.kind, ...got.object })).status, s.name).toBe('InProgress');
      captured.set(s, got);
    }
    const before = runHealthScripts(
      argoHealth,
      changed.map((s) => ({ script: scripts.get(s.kind) ?? '', object: captured.get(s)?.object })),
    );
    expect(before.map((r) => ('status' in r ? r.status : r.error))).toEqual(changed.map(() => 'Progressing'));
    operator = await runOperator(ns);
    await startSignInStatus();
    for (const s of changed) {
      const object = await readsReason(s);
      expect(object.metadata.generation).toBe(2);
      expect((await kstatus({ kind: s.kind, ...object })).status, s.name).toBe('Current');
      for (const c of object.status?.conditions ?? []) expect(c.observedGeneration, `${s.name} ${c.type}`).toBe(2);
    }
    const after = runHealthScripts(
      argoHealth,
      await Promise.all(
        changed.map(async (s) => ({ script: scripts.get(s.kind) ?? '', object: (await getYaml(s)).object })),
      ),
    );
    expect(after.map((r) => ('status' in r ? r.status : r.error))).toEqual(changed.map(() => 'Healthy'));
  }, 300_000);

  it('kstatus, the Argo CD scripts (gopher-lua) and the Flux CEL expressions read each state as the table says', async () => {
    expect(captured.size).toBe(scenarios.length);
    const list = [...captured.entries()];
    const argo = runHealthScripts(
      argoHealth,
      list.map(([s, { object }]) => ({ script: scripts.get(s.kind) ?? '', object })),
    );
    const readings = await kstatusOf(list.map(([s, { object }]) => ({ kind: s.kind, ...object })));
    const fluxes = await fluxReadings(
      flux,
      list.map(([s, { object }]) => ({ kind: s.kind, ...object })),
    );
    const rows = list.map(([s, { object }], i) => {
      const want = expected(s);
      return {
        what: `${s.kind}/${s.name} (${s.state})`,
        kstatus: readings[i]?.status,
        argo: argo[i],
        flux: s.state === 'deleting' ? want.kstatus : fluxes[i],
        want: { ...want, argoMessage: argoMessage(s, object) },
        conditions: (object.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`).sort(),
      };
    });
    for (const row of rows) {
      expect({ kstatus: row.kstatus, flux: row.flux, argo: row.argo }, row.what).toEqual({
        kstatus: row.want.kstatus,
        flux: row.want.kstatus,
        argo: { status: row.want.argo, message: row.want.argoMessage },
      });
    }
    // Waiting objects carry Reconciling=True, stuck ones Stalled=True, healthy ones neither (absent, not False).
    for (const [s, { object }] of list) {
      const types = (object.status?.conditions ?? []).map((c) => c.type);
      if (s.state === 'healthy') expect(types, s.name).toEqual(['Ready']);
      if (s.state === 'waiting') expect(condition(object, 'Reconciling')?.status, s.name).toBe('True');
      if (s.state === 'stuck') expect(condition(object, 'Stalled')?.status, s.name).toBe('True');
      for (const c of object.status?.conditions ?? [])
        expect(typeof c.observedGeneration, `${s.name} ${c.type}`).toBe('number');
    }
  });

  it.runIf(CAPTURE)("writes the captured objects and their expected health as the scripts' testdata", async () => {
    for (const kind of Object.keys(GROUP_OF)) {
      const dir = customizationDir(REPO_ROOT, GROUP_OF[kind] ?? '', kind);
      await mkdir(join(dir, 'testdata'), { recursive: true });
      const tests: Array<{ healthStatus: { status: string; message: string }; inputPath: string }> = [];
      for (const [s, { yamlText, object }] of captured) {
        if (s.kind !== kind) continue;
        await writeFile(join(dir, 'testdata', `${s.state}.yaml`), yamlText);
        tests.push({
          healthStatus: { status: expected(s).argo, message: argoMessage(s, object) },
          inputPath: `testdata/${s.state}.yaml`,
        });
      }
      await writeFile(join(dir, 'health_test.yaml'), yaml.dump({ tests }, { lineWidth: -1 }));
    }
  });

  it('releases what it held', async () => {
    for (const s of scenarios.filter((x) => x.foreignFinalizer)) {
      const r = await kubectl([
        'patch',
        s.resource,
        s.name,
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { finalizers: null } }),
      ]);
      expect(r.code, r.stderr).toBe(0);
    }
  });
});
