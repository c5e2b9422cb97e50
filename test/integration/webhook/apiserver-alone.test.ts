/**
 * The apiserver enforces the rules by itself: with the admission webhook configurations deleted (as when
 * the webhook is down behind `failurePolicy: Ignore`, or bypassed during an upgrade), every invalid example
 * the README does not list as webhook-only is refused by the CRD schema and its CEL rules, naming the field;
 * every valid example is accepted. The conversion webhook stays: it is not admission, and v1beta1 objects
 * cannot be stored without it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crdFor } from '../../../src/api/crd/generate.js';
import type { JSONSchemaProps } from '../../../src/api/crd/openapi.js';
import { predictionEndpointKind } from '../../../src/api/prediction/v1/kinds.js';
import { addressProblem } from '../../../src/api/registry/address.js';
import { MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from '../../../src/webhook/install.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { loadExamples, REPO_ROOT } from '../../support/examples.js';
import { namesField } from '../../support/field-in-answer.js';
import { startWebhookHarness, type WebhookHarness } from './harness.js';

let harness: WebhookHarness;
let ns: string;

/** The example files the README's "Rules only the webhook enforces" table names. */
function webhookOnlyExamples(): Set<string> {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /<!-- webhook-only:begin -->([\s\S]*?)<!-- webhook-only:end -->/.exec(readme)?.[1];
  if (section === undefined) throw new Error('README.md has no webhook-only section');
  return new Set([...section.matchAll(/`(examples\/invalid\/[^`]+\.yaml)`/g)].map((m) => m[1] ?? ''));
}

function inNamespace(text: string): string {
  return text.replace(/^(\s*)namespace: endpoint-demo\s*$/gm, `$1namespace: ${ns}`);
}

const apply = (yaml: string) => kubectl(['apply', '-n', ns, '--validate=false', '-f', '-'], { input: yaml });

beforeAll(async () => {
  harness = await startWebhookHarness();
  ns = await createTestNamespace('apiserver-alone');
  await harness.client.delete(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, harness.settings.configurationName);
  await harness.client.delete(MUTATING_WEBHOOK_CONFIGURATIONS, undefined, harness.settings.configurationName);
  // The apiserver drops a configuration through an informer: wait until admission no longer answers.
  // A rule only the webhook enforces (README): a BigQuery table id of 1,200 UTF-8 bytes.
  const outputUri = `bq://probe-project.logs.${'é'.repeat(600)}`;
  const probe = JSON.stringify({
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'probe' },
    spec: { displayName: 'probe', predictRequestResponseLoggingConfig: { bigqueryDestination: { outputUri } } },
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await kubectl(['create', '-n', ns, '--dry-run=server', '-f', '-'], { input: probe });
    if (r.code === 0) break;
    if (Date.now() > deadline)
      throw new Error(`the webhook still answers 30 s after its configuration was deleted: ${r.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
});

afterAll(async () => {
  await harness?.stop();
});

describe('the apiserver alone, with the admission webhooks deleted', () => {
  const webhookOnly = webhookOnlyExamples();
  const invalid = loadExamples('invalid').filter((e) => e.cluster === undefined);

  it('lists webhook-only rules that exist as examples', () => {
    const paths = new Set(invalid.map((e) => e.path));
    expect([...webhookOnly].filter((p) => !paths.has(p))).toEqual([]);
  });

  for (const example of invalid.filter((e) => !webhookOnly.has(e.path))) {
    it(`refuses ${example.path} naming ${example.expectField ?? '?'}`, async () => {
      const r = await apply(inNamespace(example.text));
      expect(r.code, `${example.path} was accepted:\n${r.stdout}`).not.toBe(0);
      expect(r.stderr).not.toContain('admission webhook');
      const field = example.expectField ?? '';
      expect(namesField(r.stderr, field), `expected ${field} in:\n${r.stderr}`).toBe(true);
    });
  }

  for (const example of invalid.filter((e) => webhookOnly.has(e.path))) {
    // The README's claim, kept honest: once CEL can say it, the example moves out of the table.
    it(`accepts ${example.path}, a webhook-only rule`, async () => {
      const r = await apply(inNamespace(example.text));
      expect(r.code, r.stderr).toBe(0);
    });
  }

  for (const example of loadExamples('valid')) {
    it(`accepts ${example.path}`, async () => {
      const r = await apply(inNamespace(example.text));
      expect(r.code, r.stderr).toBe(0);
    });
  }
});

describe('validation ratcheting', () => {
  const crd = crdFor(predictionEndpointKind);
  const specSchema = (c: typeof crd) =>
    (c.spec.versions as { schema: { openAPIV3Schema: JSONSchemaProps } }[])[0]?.schema.openAPIV3Schema.properties
      ?.spec as JSONSchemaProps;
  const endpoint = (labels: Record<string, string>, description: string) =>
    JSON.stringify({
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name: 'stored-before', namespace: ns },
      spec: { displayName: 'stored before the rule', description, labels },
    });
  const applyCrd = (c: typeof crd) =>
    kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=ratcheting-test', '-f', '-'], {
      input: JSON.stringify(c),
    });

  afterAll(async () => {
    await applyCrd(crd);
  });

  it('lets an object stored before a rule tightened be updated in the fields that did not change', async () => {
    // The CRD as it was before label keys had a rule.
    const older = structuredClone(crd);
    delete (specSchema(older).properties?.labels as JSONSchemaProps)['x-kubernetes-validations'];
    expect((await applyCrd(older)).code).toBe(0);
    const badKey = { Team: 'fraud' };
    const deadline = Date.now() + 30_000;
    let created = await kubectl(['create', '-f', '-'], { input: endpoint(badKey, 'v1') });
    while (created.code !== 0 && Date.now() < deadline) {
      // The apiserver swaps the CRD's validators a moment after the update.
      await new Promise((resolve) => setTimeout(resolve, 200));
      created = await kubectl(['create', '-f', '-'], { input: endpoint(badKey, 'v1') });
    }
    expect(created.code, created.stderr).toBe(0);

    expect((await applyCrd(crd)).code).toBe(0);
    for (;;) {
      const probe = await kubectl(['create', '--dry-run=server', '-f', '-'], {
        input: endpoint(badKey, 'v1').replace('stored-before', 'probe-rule'),
      });
      if (probe.code !== 0) break;
      if (Date.now() > deadline + 30_000) throw new Error('the tightened rule never took effect');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const unchangedLabels = await kubectl(['replace', '-f', '-'], { input: endpoint(badKey, 'v2') });
    expect(unchangedLabels.code, unchangedLabels.stderr).toBe(0);
    const changedLabels = await kubectl(['replace', '-f', '-'], {
      input: endpoint({ ...badKey, Owner: 'risk' }, 'v3'),
    });
    expect(changedLabels.code).not.toBe(0);
    expect(changedLabels.stderr).toMatch(/spec\.labels: Invalid value: ("object": )?every key must be valid/);
  });
});

describe('the v1beta1 spec.network transition rule', () => {
  const endpoint = (network: string | undefined) =>
    JSON.stringify({
      apiVersion: 'registry.endpoint-operator.dev/v1beta1',
      kind: 'RegistryEndpoint',
      metadata: { name: 'network-transitions', namespace: ns },
      spec: {
        name: 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout/endpoints/network-transitions',
        address: '10.0.0.7',
        port: 80,
        ...(network === undefined ? {} : { network }),
      },
    });
  const replace = (network: string | undefined) => kubectl(['replace', '-f', '-'], { input: endpoint(network) });
  const vpc = 'projects/418832410291/locations/global/networks/a';

  it('treats absent and "" as the same unset value, and refuses adding, changing or removing a network', async () => {
    const created = await kubectl(['create', '-f', '-'], { input: endpoint(undefined) });
    expect(created.code, created.stderr).toBe(0);
    expect((await replace('')).code).toBe(0);
    const added = await replace(vpc);
    expect(added.code).not.toBe(0);
    expect(added.stderr).toContain('spec.network: Invalid value: field is immutable (was unset)');
    await kubectl([
      'delete',
      'registryendpoints.v1beta1.registry.endpoint-operator.dev',
      '-n',
      ns,
      'network-transitions',
    ]);
    expect((await kubectl(['create', '-f', '-'], { input: endpoint(vpc) })).code).toBe(0);
    expect((await replace(vpc)).code).toBe(0);
    const changed = await replace(vpc.replace(/a$/, 'b'));
    expect(changed.stderr).toContain(`field is immutable (was "${vpc}")`);
    const removed = await replace(undefined);
    expect(removed.stderr).toContain(`field is immutable (was "${vpc}")`);
  });
});

describe('isIP agrees with the address validator', () => {
  // Forms the validator (src/api/registry/address.ts) accepts that a stricter parser might not.
  const accepted = [
    '10.0.0.5',
    '0.0.0.0',
    '255.255.255.255',
    '::',
    '::1',
    '1::',
    '2001:db8::5',
    'fe80::1',
    '::ffff:10.0.0.1',
    '::FFFF:10.0.0.1',
    '0:0:0:0:0:ffff:10.0.0.1',
    '::ffff:a00:1',
    '64:ff9b::192.0.2.33',
    '2001:DB8::A',
  ];
  const refused = [
    '::fffff:10.0.0.1',
    '::ffff:010.0.0.1',
    '::ffff:10.0.0',
    '::ffff:10.0.0.1:80',
    'ffff::ffff::1',
    '::ffff:1.2.3.4.5',
  ];

  it.each(accepted)('accepts %s', async (address) => {
    expect(addressProblem(address)).toBeUndefined();
    const name = `addr-${Buffer.from(address).toString('hex').slice(0, 40)}`;
    const endpoint = {
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryEndpoint',
      metadata: { name, namespace: ns },
      spec: {
        name: `projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout/endpoints/${name}`,
        address,
        port: 80,
      },
    };
    const r = await kubectl(['create', '--dry-run=server', '-f', '-'], { input: JSON.stringify(endpoint) });
    expect(r.code, r.stderr).toBe(0);
  });

  it.each(refused)('refuses %s, as the validator does', async (address) => {
    expect(addressProblem(address)).toBeDefined();
    const endpoint = {
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryEndpoint',
      metadata: { name: 'addr-refused', namespace: ns },
      spec: {
        name: 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout/endpoints/addr-refused',
        address,
        port: 80,
      },
    };
    const r = await kubectl(['create', '--dry-run=server', '-f', '-'], { input: JSON.stringify(endpoint) });
    expect(r.stderr).toContain('spec.address: Invalid value');
  });
});
