import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { loadExamples } from '../../support/examples.js';
import { namesField } from '../../support/field-in-answer.js';
import { ensureWebhookCertificates } from '../../../src/webhook/certificate-secret.js';
import { CRDS, installWebhooks } from '../../../src/webhook/install.js';
import { startWebhookHarness, type WebhookHarness } from './harness.js';

let harness: WebhookHarness;
let ns: string;

beforeAll(async () => {
  harness = await startWebhookHarness();
  ns = await createTestNamespace('webhook');
});

afterAll(async () => {
  await harness?.stop();
});

/** Examples are written for namespace `endpoint-demo`; each test run applies them in its own. */
function inNamespace(text: string): string {
  return text.replace(/^(\s*)namespace: endpoint-demo\s*$/gm, `$1namespace: ${ns}`);
}

const apply = (yaml: string, ...flags: string[]) => kubectl(['apply', '-n', ns, ...flags, '-f', '-'], { input: yaml });

const endpointName = 'projects/payments-prod/locations/us-east1/namespaces/checkout/services/ledger/endpoints/ledger-1';

describe('webhook installation', () => {
  it('created the configuration and pointed the RegistryEndpoint conversion at this server', async () => {
    expect(harness.install.configuration).toBe('created');
    expect(harness.install.mutatingConfiguration).toBe('created');
    expect(harness.install.crds).toEqual({ 'registryendpoints.registry.endpoint-operator.dev': 'updated' });
    const crd = await harness.client.get<{
      metadata: object;
      spec: { conversion: { webhook: { clientConfig: { url?: string; service?: unknown; caBundle?: string } } } };
    }>(CRDS, undefined, 'registryendpoints.registry.endpoint-operator.dev');
    const clientConfig = crd?.spec.conversion.webhook.clientConfig;
    expect(clientConfig?.url).toBe(`https://127.0.0.1:${harness.server.port}/convert`);
    expect(clientConfig?.service).toBeUndefined();
    expect(Buffer.from(clientConfig?.caBundle ?? '', 'base64').toString()).toContain('BEGIN CERTIFICATE');
  });

  it('writes nothing when installed again with the same CA (what every replica does at start)', async () => {
    const certs = await ensureWebhookCertificates(harness.client, harness.settings);
    expect(await installWebhooks(harness.client, harness.settings, certs.caBundle)).toEqual({
      configuration: 'unchanged',
      mutatingConfiguration: 'unchanged',
      crds: { 'registryendpoints.registry.endpoint-operator.dev': 'unchanged' },
    });
  });
});

describe('finalizers set at creation by the mutating webhook', () => {
  it('returns a created DeployedModel and PredictionEndpoint with the finalizer, before any controller ran', async () => {
    // No controller runs in this file: the finalizer can only come from the webhook. The API server
    // picks configurations up through an informer, so the first create may race it: retry with new names.
    const created = async (
      kind: string,
      name: string,
      spec: object,
    ): Promise<{ metadata: { finalizers?: string[] } }> => {
      const manifest = JSON.stringify({
        apiVersion: 'prediction.endpoint-operator.dev/v1',
        kind,
        metadata: { name },
        spec,
      });
      const result = await kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], { input: manifest });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as { metadata: { finalizers?: string[] } };
    };
    const deadline = Date.now() + 20_000;
    let endpoint = await created('PredictionEndpoint', 'fin-ep-0', { displayName: 'finalizer probe' });
    for (let i = 1; endpoint.metadata.finalizers === undefined && Date.now() < deadline; i++) {
      await new Promise((r) => setTimeout(r, 200));
      endpoint = await created('PredictionEndpoint', `fin-ep-${i}`, { displayName: 'finalizer probe' });
    }
    expect(endpoint.metadata.finalizers).toEqual(['prediction.endpoint-operator.dev/finalizer']);
    const model = await created('DeployedModel', 'fin-model', {
      endpointRef: { name: 'fin-ep-0' },
      model: 'projects/p/locations/l/models/m',
      automaticResources: { minReplicaCount: 1 },
    });
    expect(model.metadata.finalizers).toEqual(['prediction.endpoint-operator.dev/finalizer']);
    // Kinds without a finalizer are not touched.
    const service = JSON.stringify({
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryService',
      metadata: { name: 'fin-svc' },
      spec: { name: 'projects/payments-prod/locations/us-east1/namespaces/checkout/services/fin-svc' },
    });
    const result = await kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], { input: service });
    expect(result.code, result.stderr).toBe(0);
    const svc = JSON.parse(result.stdout) as { metadata: { finalizers?: string[] } };
    expect(svc.metadata.finalizers).toBeUndefined();
  });
});

describe('kubectl apply of the examples', () => {
  const invalid = loadExamples('invalid');
  const valid = loadExamples('valid');

  it('has examples to apply', () => {
    expect(invalid.length).toBeGreaterThan(0);
    expect(valid.length).toBeGreaterThan(0);
  });

  for (const example of invalid.filter((e) => e.cluster !== undefined)) {
    // Rules only `endpoint-operator validate --strict` enforces: what the cluster does instead.
    it(`${example.cluster === 'unsendable' ? 'cannot send' : 'accepts'} ${example.path} (${example.cluster}) naming ${example.expectField ?? '?'}`, async () => {
      const r = await apply(inNamespace(example.text), '--validate=false');
      if (example.cluster === 'unsendable') {
        expect(r.code, `${example.path} was sent:\n${r.stdout}`).not.toBe(0);
        expect(r.stderr).toMatch(/invalid Unicode character escape/);
        return;
      }
      expect(r.code, r.stderr).toBe(0);
      // The apiserver pruned the field before admission; the webhook read it from the applied manifest.
      if (example.cluster === 'accepted-with-warning')
        expect(r.stderr).toMatch(
          new RegExp(`Warning: ${example.expectField?.replace(/[.[\]]/g, '\\$&') ?? ''}: unknown field: `),
        );
    });
  }

  for (const example of invalid.filter((e) => e.cluster === undefined)) {
    it(`refuses ${example.path} naming ${example.expectField ?? '(no expect-field header)'}`, async () => {
      expect(example.expectField, `${example.path} needs a "# expect-field:" header`).toBeDefined();
      // --validate=false: the refusal must come from the API server (schema or webhook), not from kubectl.
      const r = await apply(inNamespace(example.text), '--validate=false');
      expect(r.code, `${example.path} was accepted:\n${r.stdout}`).not.toBe(0);
      const field = example.expectField ?? '';
      expect(namesField(r.stderr, field), `expected ${field} in:\n${r.stderr}`).toBe(true);
    });
  }

  for (const example of valid) {
    it(`accepts ${example.path}`, async () => {
      const r = await apply(inNamespace(example.text), '--validate=false');
      expect(r.code, r.stderr).toBe(0);
    });
  }
});

describe('RegistryEndpoint served as v1beta1 and v1 from one stored object', () => {
  const beta = (name: string) => `
apiVersion: registry.endpoint-operator.dev/v1beta1
kind: RegistryEndpoint
metadata:
  name: ${name}
spec:
  name: ${endpointName}
  address: 10.20.30.40
  port: 8443
  metadata:
    team: payments
    example.com/tier: gold
  network: projects/123456789012/locations/global/networks/shared-vpc
`;

  it('reads a v1beta1 object as v1 with annotations, and back as v1beta1 unchanged', async () => {
    expect((await apply(beta('ledger-beta'))).code).toBe(0);
    const v1 = await kubectl([
      'get',
      '-n',
      ns,
      'registryendpoints.v1.registry.endpoint-operator.dev',
      'ledger-beta',
      '-o',
      'json',
    ]);
    expect(v1.code, v1.stderr).toBe(0);
    const asV1 = JSON.parse(v1.stdout) as { apiVersion: string; spec: Record<string, unknown> };
    expect(asV1.apiVersion).toBe('registry.endpoint-operator.dev/v1');
    expect(asV1.spec).toMatchObject({
      name: endpointName,
      address: '10.20.30.40',
      port: 8443,
      annotations: { team: 'payments', 'example.com/tier': 'gold' },
    });
    expect(asV1.spec.metadata).toBeUndefined();
    expect(asV1.spec.network).toBeUndefined();

    const b = await kubectl([
      'get',
      '-n',
      ns,
      'registryendpoints.v1beta1.registry.endpoint-operator.dev',
      'ledger-beta',
      '-o',
      'json',
    ]);
    expect(b.code, b.stderr).toBe(0);
    const asBeta = JSON.parse(b.stdout) as {
      apiVersion: string;
      metadata: { annotations?: Record<string, string> };
      spec: Record<string, unknown>;
    };
    expect(asBeta.apiVersion).toBe('registry.endpoint-operator.dev/v1beta1');
    expect(asBeta.spec).toEqual({
      name: endpointName,
      address: '10.20.30.40',
      port: 8443,
      metadata: { team: 'payments', 'example.com/tier': 'gold' },
      network: 'projects/123456789012/locations/global/networks/shared-vpc',
    });
    // Only kubectl's own last-applied annotation: the conversion data does not leak into v1beta1.
    expect(Object.keys(asBeta.metadata.annotations ?? {})).toEqual([
      'kubectl.kubernetes.io/last-applied-configuration',
    ]);
  });

  it('lists it through both versions', async () => {
    for (const version of ['v1', 'v1beta1']) {
      const r = await kubectl(['get', '-n', ns, `registryendpoints.${version}.registry.endpoint-operator.dev`]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('ledger-beta');
    }
  });

  it('refuses a change of the immutable v1beta1 spec.network', async () => {
    const r = await apply(beta('ledger-beta').replace('shared-vpc', 'other-vpc'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.network');
  });
});

describe('admission through kubectl', () => {
  it('prints the webhook warnings', async () => {
    const r = await apply(`
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata:
  name: ledger-reserved
spec:
  name: ${endpointName}
  address: 10.20.30.41
  port: 80
  annotations:
    endpoint-operator.dev/owner: platform
`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Warning: .*spec\.annotations\[endpoint-operator\.dev\/owner\]/);
  });

  it('prints the deprecation warning for enablePrivateServiceConnect', async () => {
    const r = await apply(`
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata:
  name: psc-endpoint
spec:
  displayName: Private endpoint
  enablePrivateServiceConnect: true
`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Warning: spec\.enablePrivateServiceConnect is deprecated/);
  });

  it('takes "" and null as unset, at the schema and the webhook alike (network "" with enablePrivateServiceConnect, v1beta1 network "", port null)', async () => {
    const r = await apply(`
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata:
  name: unset-network
spec:
  displayName: Unset network
  network: ""
  enablePrivateServiceConnect: true
---
apiVersion: registry.endpoint-operator.dev/v1beta1
kind: RegistryEndpoint
metadata:
  name: unset-beta
spec:
  name: ${endpointName.replace('ledger-1', 'unset-1')}
  address: ""
  port: null
  network: ""
`);
    expect(r.code, r.stderr).toBe(0);
    // The apiserver pruned the null; "" stays, and v1beta1 reads it back as it was written.
    const beta = await kubectl([
      'get',
      '-n',
      ns,
      'registryendpoints.v1beta1.registry.endpoint-operator.dev',
      'unset-beta',
      '-o',
      'json',
    ]);
    const spec = (JSON.parse(beta.stdout) as { spec: Record<string, unknown> }).spec;
    expect(spec.port).toBeUndefined();
    expect(spec.network).toBe('');
    // Applying it again unchanged is no change of the immutable network.
    expect(
      (
        await apply(`
apiVersion: registry.endpoint-operator.dev/v1beta1
kind: RegistryEndpoint
metadata:
  name: unset-beta
spec:
  name: ${endpointName.replace('ledger-1', 'unset-1')}
  network: ""
`)
      ).code,
    ).toBe(0);
  });

  it('refuses a change of an immutable field with the field path', async () => {
    const first = `
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata:
  name: ledger-immutable
spec:
  name: ${endpointName}
  port: 80
`;
    expect((await apply(first)).code).toBe(0);
    const r = await apply(first.replace('endpoints/ledger-1', 'endpoints/ledger-2'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.name');
    // The CRD's CEL rule and the webhook word it alike: either may answer first.
    expect(r.stderr).toContain('field is immutable');
  });

  it('refuses an update whose spec.etag is stale, and accepts the current one', async () => {
    const pe = (displayName: string, etag?: string) => `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata:
  name: etag-check
spec:
  displayName: ${displayName}
${etag === undefined ? '' : `  etag: ${etag}`}
`;
    expect((await apply(pe('first'))).code).toBe(0);
    const ref = {
      group: 'prediction.endpoint-operator.dev',
      version: 'v1',
      plural: 'predictionendpoints',
      namespaced: true,
    };
    // What the operator would write after reconciling: the spec's fingerprint in status.etag.
    await harness.client.patch(
      ref,
      ns,
      'etag-check',
      { status: { etag: 'current-etag' } },
      { type: 'merge', subresource: 'status' },
    );
    const stale = await apply(pe('second', 'stale-etag'));
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain('spec.etag');
    expect(stale.stderr).toContain('stale-etag');
    const fresh = await apply(pe('second', 'current-etag'));
    expect(fresh.code, fresh.stderr).toBe(0);
  });

  // The CRD's rules run before validating admission, so they answer; the webhook's own answer names the key
  // (spec.annotations[-bad-key]), test/unit/webhook.
  it('names every field path, value and rule of a manifest with several errors', async () => {
    const r = await apply(`
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata:
  name: ledger-bad
spec:
  name: ${endpointName}
  address: 8.8.8.8:53
  annotations:
    "-bad-key": x
`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.address');
    expect(r.stderr).toContain('spec.address: Invalid value: "8.8.8.8:53": must be a bare IPv4 or IPv6 address');
    expect(r.stderr).toMatch(
      /spec\.annotations: Invalid value: ("object": )?every key must be valid: a key is an optional prefix/,
    );
  });
});
