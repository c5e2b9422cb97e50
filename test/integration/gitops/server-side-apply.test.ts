/**
 * What a GitOps tool does to the examples: Flux's kustomize-controller and Argo CD (ServerSideApply=true) apply
 * them server-side under their own field manager, again and again, and diff them against the live objects.
 * The operator must never take ownership of a field they apply (status goes through the status subresource,
 * finalizers and ids are its own), so a second apply changes nothing and, once it has reconciled, the diff is
 * empty. And strict field validation, kubectl's default, has the apiserver refuse a misspelt field.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPassword, demoSecrets } from '../../../dev/environment/demo-secrets.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import {
  apply,
  exampleBackendsIn,
  examplesIn,
  runOperator,
  waitReady,
  type TestOperator,
} from '../reconcilers/harness.js';
import { startWebhookHarness, type WebhookHarness } from '../webhook/harness.js';

const MANAGER = 'kustomize-controller';
const AREAS = ['prediction', 'registry', 'pos'];

describe('server-side apply of the examples, as a GitOps tool does it', () => {
  let ns: string;
  let op: TestOperator;
  let webhooks: WebhookHarness;
  let manifests = '';

  beforeAll(async () => {
    webhooks = await startWebhookHarness();
    ns = await createTestNamespace('ssa');
    op = await runOperator(ns);
    manifests = AREAS.map((a) => examplesIn(a, ns)).join('---\n');
    // What the examples need beside them: the demo users' password Secrets and the model servers' Services.
    const secrets = await demoSecrets(yaml.loadAll(manifests), demoPassword());
    await apply(
      ns,
      [
        ...secrets.map((s) =>
          yaml.dump({ ...s.secret, metadata: { ...(s.secret.metadata as object), namespace: ns } }),
        ),
        await exampleBackendsIn('prediction', ns),
      ].join('---\n'),
    );
  }, 180_000);

  afterAll(async () => {
    await op?.stop();
    await webhooks?.stop();
  });

  const ssa = (verb: 'apply' | 'diff'): Promise<{ code: number; stdout: string; stderr: string }> =>
    kubectl(
      verb === 'apply'
        ? ['apply', '--server-side', `--field-manager=${MANAGER}`, '-f', '-']
        : ['diff', '--server-side', `--field-manager=${MANAGER}`, '-f', '-'],
      { input: manifests },
    );

  const versions = async (): Promise<Record<string, string>> => {
    const r = await kubectl(['get', '-n', ns, 'endpoint-operator', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const items = (
      JSON.parse(r.stdout) as {
        items: { kind: string; metadata: { name: string; resourceVersion: string; generation: number } }[];
      }
    ).items;
    return Object.fromEntries(
      items.map((i) => [`${i.kind}/${i.metadata.name}`, `${i.metadata.resourceVersion} g${i.metadata.generation}`]),
    );
  };

  it('applies every example; a second apply changes nothing', { timeout: 180_000 }, async () => {
    const first = await ssa('apply');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/serverside-applied/);
    // The sign-in kinds' Ready is the sign-in API's to write, which this test does not run.
    await waitReady(ns, 'predictionendpoints,deployedmodels,registryservices,registryendpoints --all', 90);
    const before = await versions();
    const second = await ssa('apply');
    expect(second.code, second.stderr).toBe(0);
    expect(await versions()).toEqual(before);
  });

  it('has nothing to diff once the operator has reconciled: it owns none of the applied fields', async () => {
    const diff = await ssa('diff');
    // kubectl diff: 0 no differences, 1 differences, >1 an error.
    expect(diff.code, `${diff.stdout}\n${diff.stderr}`).toBe(0);
    expect(diff.stdout).toBe('');
  });

  it("refuses a misspelt field under strict field validation, kubectl's default, with the apiserver's own message", async () => {
    const typo = `apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: typo, namespace: ${ns} }
spec:
  name: projects/demo-project/locations/europe-west4/namespaces/shop/services/checkout/endpoints/typo
  adress: 10.0.0.1
`;
    for (const flags of [['--validate=strict'], []]) {
      const r = await kubectl(['apply', ...flags, '-f', '-'], { input: typo });
      expect(r.code, `${flags.join(' ')}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr, flags.join(' ')).toMatch(/unknown field "spec\.adress"/);
    }
    // Server-side apply builds a typed patch from the schema: the apiserver refuses the field there.
    const ssaTypo = await kubectl(['apply', '--server-side', `--field-manager=${MANAGER}`, '-f', '-'], { input: typo });
    expect(ssaTypo.code).not.toBe(0);
    expect(ssaTypo.stderr).toContain('.spec.adress: field not declared in schema');
    const warned = await kubectl(['apply', '--validate=warn', '--dry-run=server', '-f', '-'], { input: typo });
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(/unknown field "spec\.adress"/);
  });
});
