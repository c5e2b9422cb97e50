import { isDeepStrictEqual } from 'node:util';
import type { KindDefinition } from '../api/common/kind.js';
import { crdName } from '../api/crd/generate.js';
import { allKinds } from '../api/kinds.js';
import type { KubeObject, ResourceRef } from '../api/common/kube-object.js';
import type { WebhookKubeApi } from './certificate-secret.js';
import {
  conversionClientConfig,
  mutatingWebhookConfiguration,
  webhookConfiguration,
  type ValidatingWebhook,
  type WebhookConfiguration,
} from './configuration.js';
import type { WebhookSettings } from './settings.js';

export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};
export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
};
export const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

export type InstallAction = 'created' | 'updated' | 'unchanged' | 'missing';

export interface InstallReport {
  /** The ValidatingWebhookConfiguration. */
  readonly configuration: InstallAction;
  /** The MutatingWebhookConfiguration (finalizers at creation). */
  readonly mutatingConfiguration: InstallAction;
  /** Per multi-version CRD name; `missing` when the CRD is not installed (nothing to inject into). */
  readonly crds: Readonly<Record<string, InstallAction>>;
}

const FIELD_MANAGER = 'endpoint-operator-webhook';

/** True when every field of `want` is present with the same value in `have` (server defaults in `have` are ignored). */
export function containsFields(have: unknown, want: unknown): boolean {
  if (Array.isArray(want))
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => containsFields(have[i], w));
  if (typeof want === 'object' && want !== null) {
    if (typeof have !== 'object' || have === null || Array.isArray(have)) return false;
    return Object.entries(want).every(([k, w]) => containsFields((have as Record<string, unknown>)[k], w));
  }
  return isDeepStrictEqual(have, want);
}

interface WebhookConfigurationObject extends KubeObject {
  webhooks?: ValidatingWebhook[];
}

interface CrdObject extends KubeObject {
  spec?: {
    conversion?: {
      strategy?: string;
      webhook?: { clientConfig?: Record<string, unknown>; conversionReviewVersions?: string[] };
    };
  };
}

async function installConfiguration(
  client: WebhookKubeApi,
  desired: WebhookConfiguration,
  keepCaFromInjector: boolean,
): Promise<InstallAction> {
  const ref =
    desired.kind === 'MutatingWebhookConfiguration'
      ? MUTATING_WEBHOOK_CONFIGURATIONS
      : VALIDATING_WEBHOOK_CONFIGURATIONS;
  const existing = await client.get<WebhookConfigurationObject>(ref, undefined, desired.metadata.name);
  if (!existing) {
    await client.create(ref, undefined, desired, { fieldManager: FIELD_MANAGER });
    return 'created';
  }
  const webhooks = keepCaFromInjector
    ? (desired.webhooks as ValidatingWebhook[]).map((w, i) => {
        const injected = existing.webhooks?.[i]?.clientConfig.caBundle;
        return injected === undefined ? w : { ...w, clientConfig: { ...w.clientConfig, caBundle: injected } };
      })
    : desired.webhooks;
  if (containsFields(existing.webhooks, webhooks) && containsFields(existing.metadata, desired.metadata))
    return 'unchanged';
  const body = {
    ...desired,
    webhooks,
    metadata: {
      ...existing.metadata,
      ...desired.metadata,
      labels: { ...existing.metadata.labels, ...desired.metadata.labels },
      resourceVersion: existing.metadata.resourceVersion,
    },
  };
  await client.replace(ref, undefined, desired.metadata.name, body, { fieldManager: FIELD_MANAGER });
  return 'updated';
}

async function injectConversion(
  client: WebhookKubeApi,
  settings: WebhookSettings,
  def: KindDefinition,
  caBundlePem: string | undefined,
): Promise<InstallAction> {
  const name = crdName(def);
  const crd = await client.get<CrdObject>(CRDS, undefined, name);
  if (!crd) return 'missing';
  const certManager = settings.certificates.mode === 'cert-manager';
  const wanted = conversionClientConfig(settings, certManager ? undefined : caBundlePem);
  const current = crd.spec?.conversion;
  const clientConfig: Record<string, unknown> = { ...wanted };
  if (certManager && current?.webhook?.clientConfig?.caBundle !== undefined)
    clientConfig.caBundle = current.webhook.clientConfig.caBundle;
  const sameConfig =
    current?.strategy === 'Webhook' &&
    isDeepStrictEqual(current.webhook?.clientConfig, clientConfig) &&
    isDeepStrictEqual(current.webhook?.conversionReviewVersions, ['v1']);
  const injectFrom = certManager ? `${settings.namespace}/${settings.certificates.certificate}` : undefined;
  const sameAnnotation =
    injectFrom === undefined || crd.metadata.annotations?.['cert-manager.io/inject-ca-from'] === injectFrom;
  if (sameConfig && sameAnnotation) return 'unchanged';
  // A merge patch merges maps: null removes the addressing mode not in use (url vs service).
  const patchConfig = { url: null, service: null, ...clientConfig };
  const patch = {
    ...(injectFrom === undefined
      ? {}
      : { metadata: { annotations: { 'cert-manager.io/inject-ca-from': injectFrom } } }),
    spec: {
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: patchConfig } },
    },
  };
  await client.patch(CRDS, undefined, name, patch, { type: 'merge', fieldManager: FIELD_MANAGER });
  return 'updated';
}

/**
 * Creates or updates the Validating- and MutatingWebhookConfiguration and points every multi-version CRD's
 * conversion webhook at this operator with the given CA bundle (PEM). Writes only what differs,
 * so every replica can call it at start and on each certificate renewal.
 */
export async function installWebhooks(
  client: WebhookKubeApi,
  settings: WebhookSettings,
  caBundlePem: string | undefined,
  kinds: readonly KindDefinition[] = allKinds,
): Promise<InstallReport> {
  const certManager = settings.certificates.mode === 'cert-manager';
  const configuration = await installConfiguration(
    client,
    webhookConfiguration(settings, caBundlePem, kinds),
    certManager,
  );
  const mutatingConfiguration = await installConfiguration(
    client,
    mutatingWebhookConfiguration(settings, caBundlePem, kinds),
    certManager,
  );
  const crds: Record<string, InstallAction> = {};
  for (const def of kinds.filter((k) => k.versions.filter((v) => v.served).length > 1)) {
    crds[crdName(def)] = await injectConversion(client, settings, def, caBundlePem);
  }
  return { configuration, mutatingConfiguration, crds };
}
