import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { KindDefinition } from '../../../src/api/common/kind.js';
import { bundleFromSecret, ensureWebhookCertificates, SECRETS } from '../../../src/webhook/certificate-secret.js';
import { mutatingWebhookConfiguration, webhookConfiguration } from '../../../src/webhook/configuration.js';
import {
  CRDS,
  installWebhooks,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from '../../../src/webhook/install.js';
import { DEFAULT_WEBHOOK_SETTINGS, localWebhookSettings, type WebhookSettings } from '../../../src/webhook/settings.js';
import { FakeApi } from './fake-api.js';
import { widgetKind } from './fixtures.js';
import { ManualClock } from '../../support/manual-clock.js';

const DAY = 86_400_000;
const t0 = new Date('2026-03-01T00:00:00Z');
const settings: WebhookSettings = {
  ...localWebhookSettings(8443),
  namespace: 'eo-system',
  caValidityDays: 30,
  servingValidityDays: 9,
};

const gadgetKind: KindDefinition = {
  ...widgetKind,
  kind: 'Gadget',
  plural: 'gadgets',
  finalizer: 'test.endpoint-operator.dev/finalizer',
  versions: [
    { ...widgetKind.versions[0]!, name: 'v1', storage: true },
    { ...widgetKind.versions[0]!, name: 'v1beta1', storage: false, spec: z.object({}) },
  ],
};
const kinds = [widgetKind, gadgetKind];
const gadgetCrd = 'gadgets.test.endpoint-operator.dev';

function withCrd(api: FakeApi): FakeApi {
  api.put(CRDS, undefined, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: gadgetCrd },
    spec: { group: 'test.endpoint-operator.dev', conversion: { strategy: 'None' } },
  });
  return api;
}

describe('ensureWebhookCertificates', () => {
  it('creates the Secret once and reuses it on the next start', async () => {
    const api = new FakeApi();
    const first = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime()) });
    expect(api.writes().map((c) => `${c.verb} ${c.plural}/${c.name}`)).toEqual([
      'create secrets/endpoint-operator-webhook-tls',
    ]);
    const stored = api.store.get('secrets/eo-system/endpoint-operator-webhook-tls');
    expect(stored).toMatchObject({ type: 'kubernetes.io/tls' });
    expect(Object.keys((stored as unknown as { data: object }).data).sort()).toEqual([
      'ca.crt',
      'ca.key',
      'tls.crt',
      'tls.key',
    ]);
    api.calls.length = 0;
    const second = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime() + DAY) });
    expect(second).toEqual(first);
    expect(api.writes()).toEqual([]);
  });

  it('reads back and reuses what another replica created first (409 AlreadyExists)', async () => {
    const api = new FakeApi();
    const other = new FakeApi();
    const theirs = await ensureWebhookCertificates(other, settings, { clock: new ManualClock(t0.getTime()) });
    api.beforeWrite = (verb, key) => {
      if (verb === 'create') api.store.set(key, other.store.get(key)!);
    };
    const mine = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime()) });
    expect(mine).toEqual(theirs);
    expect(api.writes().map((c) => c.verb)).toEqual(['create']);
  });

  it('renews the serving certificate with a resourceVersion-guarded update once a third of its lifetime is left', async () => {
    const api = new FakeApi();
    const first = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime()) });
    api.calls.length = 0;
    const renewed = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime() + 7 * DAY) });
    expect(renewed.cert).not.toBe(first.cert);
    expect(renewed.caBundle).toBe(first.caBundle);
    const writes = api.writes();
    expect(writes.map((c) => c.verb)).toEqual(['replace']);
    expect((writes[0]?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBeDefined();
  });

  it('adopts the certificates of a replica that renewed concurrently (409 Conflict)', async () => {
    const api = new FakeApi();
    await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime()) });
    const key = 'secrets/eo-system/endpoint-operator-webhook-tls';
    const later = new Date(t0.getTime() + 7 * DAY);
    // The other replica renews from the same stored Secret at the same moment.
    const other = new FakeApi();
    other.store.set(key, structuredClone(api.store.get(key)!));
    const theirs = await ensureWebhookCertificates(other, settings, { clock: new ManualClock(later.getTime()) });
    api.calls.length = 0;
    api.beforeWrite = (verb) => {
      // Its write lands between our read and our write.
      if (verb === 'replace' && api.writes().length === 1) api.put(SECRETS, 'eo-system', other.store.get(key)!);
    };
    const mine = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(later.getTime()) });
    expect(mine).toEqual(theirs);
    expect(api.writes().map((c) => c.verb)).toEqual(['replace']);
    expect(bundleFromSecret(api.store.get(key) as never)?.cert).toBe(theirs.cert);
  });

  it('under cert-manager only reads the Secret it maintains, and says what is missing', async () => {
    const cm: WebhookSettings = { ...settings, certificates: { mode: 'cert-manager', certificate: 'eo-serving' } };
    const api = new FakeApi();
    await expect(ensureWebhookCertificates(api, cm)).rejects.toThrow('Certificate eo-system/eo-serving');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    api.put(SECRETS, 'eo-system', {
      metadata: { name: settings.secretName, namespace: 'eo-system' },
      data: { 'tls.crt': b64('CERT'), 'tls.key': b64('KEY') },
    });
    expect(await ensureWebhookCertificates(api, cm)).toEqual({ cert: 'CERT', key: 'KEY', caBundle: '' });
    expect(api.writes()).toEqual([]);
  });
});

describe('installWebhooks', () => {
  it('creates the configuration, points the multi-version CRD at /convert, then writes nothing while the CA is unchanged', async () => {
    const api = withCrd(new FakeApi());
    expect(await installWebhooks(api, settings, 'CA-1', kinds)).toEqual({
      configuration: 'created',
      mutatingConfiguration: 'created',
      crds: { [gadgetCrd]: 'updated' },
    });
    const crd = api.read<{ spec: { conversion: unknown } }>(`customresourcedefinitions//${gadgetCrd}`);
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { url: 'https://127.0.0.1:8443/convert', caBundle: Buffer.from('CA-1').toString('base64') },
      },
    });
    api.calls.length = 0;
    expect(await installWebhooks(api, settings, 'CA-1', kinds)).toEqual({
      configuration: 'unchanged',
      mutatingConfiguration: 'unchanged',
      crds: { [gadgetCrd]: 'unchanged' },
    });
    expect(api.writes()).toEqual([]);
  });

  it('patches the caBundle when the CA changes', async () => {
    const api = withCrd(new FakeApi());
    await installWebhooks(api, settings, 'CA-1', kinds);
    api.calls.length = 0;
    expect(await installWebhooks(api, settings, 'CA-2', kinds)).toEqual({
      configuration: 'updated',
      mutatingConfiguration: 'updated',
      crds: { [gadgetCrd]: 'updated' },
    });
    expect(api.writes().map((c) => `${c.verb} ${c.plural}`)).toEqual([
      `replace ${VALIDATING_WEBHOOK_CONFIGURATIONS.plural}`,
      `replace ${MUTATING_WEBHOOK_CONFIGURATIONS.plural}`,
      `patch ${CRDS.plural}`,
    ]);
    for (const plural of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
      const config = api.read<{ webhooks: { clientConfig: { caBundle: string } }[] }>(`${plural}//endpoint-operator`);
      expect(config.webhooks[0]?.clientConfig.caBundle, plural).toBe(Buffer.from('CA-2').toString('base64'));
    }
  });

  it('switches the CRD from a URL to a Service reference, removing the URL', async () => {
    const api = withCrd(new FakeApi());
    await installWebhooks(api, settings, 'CA-1', kinds);
    const inCluster: WebhookSettings = { ...DEFAULT_WEBHOOK_SETTINGS, namespace: 'eo-system' };
    await installWebhooks(api, inCluster, 'CA-1', kinds);
    const crd = api.read<{ spec: { conversion: { webhook: { clientConfig: unknown } } } }>(
      `customresourcedefinitions//${gadgetCrd}`,
    );
    expect(crd.spec.conversion.webhook.clientConfig).toEqual({
      service: { namespace: 'eo-system', name: 'endpoint-operator-webhook', path: '/convert', port: 443 },
      caBundle: Buffer.from('CA-1').toString('base64'),
    });
  });

  it('reports a CRD that is not installed instead of failing', async () => {
    const api = new FakeApi();
    expect((await installWebhooks(api, settings, 'CA-1', kinds)).crds).toEqual({ [gadgetCrd]: 'missing' });
  });

  it('under cert-manager keeps the injected caBundle and annotates for the CA injector', async () => {
    const cm: WebhookSettings = { ...settings, certificates: { mode: 'cert-manager', certificate: 'eo-serving' } };
    const api = withCrd(new FakeApi());
    await installWebhooks(api, cm, undefined, kinds);
    const key = 'validatingwebhookconfigurations//endpoint-operator';
    const vwc = api.read<{
      metadata: { annotations: Record<string, string> };
      webhooks: { clientConfig: Record<string, unknown> }[];
    }>(key);
    expect(vwc.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('eo-system/eo-serving');
    expect(vwc.webhooks[0]?.clientConfig.caBundle).toBeUndefined();
    // The injector fills the caBundle; a restart of the operator must not wipe it.
    vwc.webhooks[0]!.clientConfig.caBundle = 'SU5KRUNURUQ=';
    api.store.set(key, vwc as never);
    api.calls.length = 0;
    const mutatingKey = 'mutatingwebhookconfigurations//endpoint-operator';
    const mwc = api.read<{ webhooks: { clientConfig: Record<string, unknown> }[] }>(mutatingKey);
    mwc.webhooks[0]!.clientConfig.caBundle = 'SU5KRUNURUQ=';
    api.store.set(mutatingKey, mwc as never);
    expect(await installWebhooks(api, cm, undefined, kinds)).toMatchObject({
      configuration: 'unchanged',
      mutatingConfiguration: 'unchanged',
    });
    const crd = api.read<{ metadata: { annotations: Record<string, string> } }>(
      `customresourcedefinitions//${gadgetCrd}`,
    );
    expect(crd.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('eo-system/eo-serving');
  });
});

describe('webhookConfiguration', () => {
  it('validates CREATE and UPDATE of every served version of every kind, failing closed and fast', () => {
    const cfg = webhookConfiguration({ ...DEFAULT_WEBHOOK_SETTINGS }, 'CA', kinds);
    expect(cfg.webhooks).toHaveLength(1);
    const hook = cfg.webhooks[0]!;
    expect(hook).toMatchObject({
      failurePolicy: 'Fail',
      sideEffects: 'None',
      timeoutSeconds: 5,
      admissionReviewVersions: ['v1'],
      matchPolicy: 'Equivalent',
    });
    expect(hook.rules).toEqual([
      {
        apiGroups: ['test.endpoint-operator.dev'],
        apiVersions: ['v1', 'v1beta1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['gadgets', 'widgets'],
        scope: 'Namespaced',
      },
    ]);
    expect(hook.clientConfig).toEqual({
      service: {
        namespace: 'endpoint-operator-system',
        name: 'endpoint-operator-webhook',
        path: '/validate',
        port: 443,
      },
      caBundle: Buffer.from('CA').toString('base64'),
    });
    expect(hook.namespaceSelector.matchExpressions).toContainEqual({
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: ['endpoint-operator-system'],
    });
  });

  it('points at a loopback URL in local mode', () => {
    expect(webhookConfiguration(localWebhookSettings(9443), undefined, kinds).webhooks[0]?.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/validate',
    });
  });
});

describe('mutatingWebhookConfiguration', () => {
  it('sets finalizers on CREATE of the kinds that have one, failing open because the controllers add them too', () => {
    const cfg = mutatingWebhookConfiguration({ ...DEFAULT_WEBHOOK_SETTINGS }, 'CA', kinds);
    expect(cfg.kind).toBe('MutatingWebhookConfiguration');
    expect(cfg.webhooks).toHaveLength(1);
    const hook = cfg.webhooks[0]!;
    expect(hook).toMatchObject({
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      reinvocationPolicy: 'Never',
      admissionReviewVersions: ['v1'],
      matchPolicy: 'Equivalent',
    });
    // Widget has no finalizer: only Gadget is intercepted, and only on CREATE.
    expect(hook.rules).toEqual([
      {
        apiGroups: ['test.endpoint-operator.dev'],
        apiVersions: ['v1', 'v1beta1'],
        operations: ['CREATE'],
        resources: ['gadgets'],
        scope: 'Namespaced',
      },
    ]);
    expect(hook.clientConfig).toEqual({
      service: { namespace: 'endpoint-operator-system', name: 'endpoint-operator-webhook', path: '/mutate', port: 443 },
      caBundle: Buffer.from('CA').toString('base64'),
    });
    expect(hook.namespaceSelector).toEqual(
      webhookConfiguration({ ...DEFAULT_WEBHOOK_SETTINGS }, 'CA', kinds).webhooks[0]?.namespaceSelector,
    );
  });
});
