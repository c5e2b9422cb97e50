import type { KindDefinition } from '../api/common/kind.js';
import type { ConversionClientConfig } from '../api/crd/generate.js';
import { allKinds } from '../api/kinds.js';
import { finalizedKinds } from './finalizers.js';
import { CONVERT_PATH, MUTATE_PATH, VALIDATE_PATH, type WebhookSettings } from './settings.js';

/** admissionregistration.k8s.io/v1 WebhookClientConfig. */
export type WebhookClientConfig =
  | { url: string; caBundle?: string }
  | { service: { namespace: string; name: string; path: string; port: number }; caBundle?: string };

export interface RuleWithOperations {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
  scope: 'Namespaced';
}

export interface LabelSelector {
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
  matchLabels?: Record<string, string>;
}

export interface ValidatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules: RuleWithOperations[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Equivalent' | 'Exact';
  sideEffects: 'None';
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
}

export interface MutatingWebhook extends ValidatingWebhook {
  reinvocationPolicy: 'Never' | 'IfNeeded';
}

interface ConfigurationMetadata {
  name: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ValidatingWebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'ValidatingWebhookConfiguration';
  metadata: ConfigurationMetadata;
  webhooks: ValidatingWebhook[];
}

export interface MutatingWebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'MutatingWebhookConfiguration';
  metadata: ConfigurationMetadata;
  webhooks: MutatingWebhook[];
}

export type WebhookConfiguration = ValidatingWebhookConfiguration | MutatingWebhookConfiguration;

export const WEBHOOK_NAME = 'validate.endpoint-operator.dev';
export const MUTATING_WEBHOOK_NAME = 'finalizers.endpoint-operator.dev';

/** A namespace labelled with this (value `disabled`) is not validated: an administrator's escape hatch. */
export const NAMESPACE_OPT_OUT_LABEL = 'endpoint-operator.dev/webhook';

/** Set on every namespace by the apiserver (since Kubernetes 1.21). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

const LABELS = {
  'app.kubernetes.io/name': 'endpoint-operator',
  'app.kubernetes.io/part-of': 'endpoint-operator',
  'app.kubernetes.io/component': 'webhook',
};

function base64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

/** Where the API server reaches one webhook path; `caBundle` is PEM (encoded to base64 here). */
export function clientConfig(
  settings: WebhookSettings,
  path: string,
  caBundlePem: string | undefined,
): WebhookClientConfig {
  const ca = caBundlePem === undefined ? {} : { caBundle: base64(caBundlePem) };
  if (settings.endpoint.mode === 'local') {
    const host = settings.endpoint.host.includes(':') ? `[${settings.endpoint.host}]` : settings.endpoint.host;
    return { url: `https://${host}:${settings.endpoint.port}${path}`, ...ca };
  }
  return {
    service: { namespace: settings.namespace, name: settings.serviceName, path, port: settings.endpoint.port },
    ...ca,
  };
}

/** The CRD `spec.conversion.webhook.clientConfig` for kinds served in several versions. */
export function conversionClientConfig(
  settings: WebhookSettings,
  caBundlePem: string | undefined,
): ConversionClientConfig {
  return clientConfig(settings, CONVERT_PATH, caBundlePem);
}

function rulesFor(kinds: readonly KindDefinition[], operations: string[]): RuleWithOperations[] {
  const byGroup = new Map<string, { versions: Set<string>; resources: Set<string> }>();
  // The rules are Namespaced: a cluster-scoped kind (the bucket map) is judged by its CRD's schema and CEL alone.
  for (const def of kinds.filter((k) => k.scope !== 'Cluster')) {
    const entry = byGroup.get(def.group) ?? { versions: new Set<string>(), resources: new Set<string>() };
    for (const v of def.versions) if (v.served) entry.versions.add(v.name);
    entry.resources.add(def.plural);
    byGroup.set(def.group, entry);
  }
  return [...byGroup].map(([group, { versions, resources }]) => ({
    apiGroups: [group],
    apiVersions: [...versions].sort(),
    operations,
    // Only the main resource: status writes are the operator's own and must work while the webhook is down.
    resources: [...resources].sort(),
    scope: 'Namespaced',
  }));
}

/**
 * The ValidatingWebhookConfiguration for every kind: generated from the kind list so a new kind is
 * covered, and used both by `installWebhooks` and for the Helm chart / deploy manifests.
 */
export function webhookConfiguration(
  settings: WebhookSettings,
  caBundlePem?: string,
  kinds: readonly KindDefinition[] = allKinds,
): ValidatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: configurationMetadata(settings),
    webhooks: [
      {
        name: WEBHOOK_NAME,
        clientConfig: clientConfig(
          settings,
          VALIDATE_PATH,
          settings.certificates.mode === 'cert-manager' ? undefined : caBundlePem,
        ),
        // DELETE is never intercepted, so removing the operator, its CRDs or any object is never blocked by it.
        rules: rulesFor(kinds, ['CREATE', 'UPDATE']),
        // A bypassed webhook would let invalid specs in; the reconciler re-validates, but refusing at apply time is the contract.
        failurePolicy: 'Fail',
        // Equivalent: a request through another served version (v1beta1 ↔ v1) is still validated, converted to a registered version.
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        // Short: every `kubectl apply` waits on it, and validation is pure CPU work of well under a millisecond.
        timeoutSeconds: 5,
        admissionReviewVersions: ['v1'],
        namespaceSelector: interceptedNamespaces(settings),
        // No per-object opt-out: any author could label an object around validation; opting out is a
        // namespace-level decision, which needs rights over the Namespace.
        objectSelector: {},
      },
    ],
  };
}

/** With cert-manager, caBundle is left out and its CA injector fills it from the annotation. */
function configurationMetadata(settings: WebhookSettings): ConfigurationMetadata {
  const certManager =
    settings.certificates.mode === 'cert-manager'
      ? {
          annotations: {
            'cert-manager.io/inject-ca-from': `${settings.namespace}/${settings.certificates.certificate}`,
          },
        }
      : {};
  return { name: settings.configurationName, labels: { ...LABELS }, ...certManager };
}

function interceptedNamespaces(settings: WebhookSettings): LabelSelector {
  return {
    matchExpressions: [
      // The operator's own namespace is never intercepted, so it can always be repaired or removed.
      { key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: [settings.namespace] },
      { key: NAMESPACE_OPT_OUT_LABEL, operator: 'NotIn', values: ['disabled'] },
    ],
  };
}

/**
 * The MutatingWebhookConfiguration: sets each finalized kind's finalizer on CREATE (see
 * finalizers.ts). `Ignore`, because the controllers add a missing finalizer themselves: creating
 * objects never depends on the operator being up for this webhook.
 */
export function mutatingWebhookConfiguration(
  settings: WebhookSettings,
  caBundlePem?: string,
  kinds: readonly KindDefinition[] = allKinds,
): MutatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: configurationMetadata(settings),
    webhooks: [
      {
        name: MUTATING_WEBHOOK_NAME,
        clientConfig: clientConfig(
          settings,
          MUTATE_PATH,
          settings.certificates.mode === 'cert-manager' ? undefined : caBundlePem,
        ),
        rules: rulesFor(finalizedKinds(kinds), ['CREATE']),
        failurePolicy: 'Ignore',
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        timeoutSeconds: 5,
        // Adding a finalizer commutes with any other mutation: no need to be called again after them.
        reinvocationPolicy: 'Never',
        admissionReviewVersions: ['v1'],
        namespaceSelector: interceptedNamespaces(settings),
        objectSelector: {},
      },
    ],
  };
}
