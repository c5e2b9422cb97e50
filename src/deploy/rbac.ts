/**
 * Least-privilege RBAC, derived from the API calls the operator makes (src/runtime, src/webhook,
 * src/reconcilers, src/signin/kube): no wildcards, namespaced Roles wherever the object lives in
 * a known namespace.
 */
import { SIGNIN_KEY_SECRET } from '../signin/kube/signing-key.js';
import { MACHINE_TYPES_CONFIGMAP } from './machine-types.js';
import { GATEWAY_CA_CONFIGMAP } from '../operator/gateway-ca-configmaps.js';
import { NAME, commonLabels, type DeployValues } from './values.js';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

const PREDICTION = 'prediction.endpoint-operator.dev';
const REGISTRY = 'registry.endpoint-operator.dev';
const POS = 'pos.endpoint-operator.dev';

function reconciledKinds(group: string, plurals: string[]): PolicyRule[] {
  return [
    // Informers list+watch; finalizers are added and removed with patches; update for replace-style writers.
    { apiGroups: [group], resources: plurals, verbs: ['get', 'list', 'watch', 'update', 'patch'] },
    { apiGroups: [group], resources: plurals.map((p) => `${p}/status`), verbs: ['get', 'update', 'patch'] },
    // With the OwnerReferencesPermissionEnforcement admission plugin, setting blockOwnerDeletion
    // needs update on the owner's finalizers subresource.
    { apiGroups: [group], resources: plurals.map((p) => `${p}/finalizers`), verbs: ['update'] },
  ];
}

/** Cluster-scoped and all-namespace rules: the reconciled kinds, Events, webhook and CRD caBundle injection. */
export function clusterRules(): PolicyRule[] {
  return [
    ...reconciledKinds(PREDICTION, ['predictionendpoints', 'deployedmodels', 'models']),
    ...reconciledKinds(REGISTRY, ['registryservices', 'registryendpoints']),
    // The bucket map (ModelArtifactBucket, cluster-scoped): read and followed, never written.
    { apiGroups: [PREDICTION], resources: ['modelartifactbuckets'], verbs: ['get', 'list', 'watch'] },
    // DeployedModel backends (their Service and its EndpointSlices decide BackendUnavailable, watched) and the cluster
    // DNS of RegistryServices (spec.dns: a headless Service and its EndpointSlices per service, created, corrected and
    // removed by the operator; every Service is watched to see a foreign one of the name).
    // A DeployedModel's containerSpec Service is written with server-side apply (patch).
    { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    // DeployedModel containerSpec: the Deployment, HPA and PDB are server-side applied (patch, and create: an apply
    // that creates the object is authorised as a create) and watched by label;
    // an HPA or PDB the spec no longer asks for is deleted; the Deployment goes only by garbage collection. Pods are
    // only read (their state gives the Stalled reasons).
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
    { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
    // A containerSpec model's NetworkPolicy (only the gateway reaches its pods): server-side applied, watched by label,
    // deleted when --model-network-policy is off.
    { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
    // The gateway's CA, published as a ConfigMap of one name in its clients' namespaces (server-side applied, deleted
    // with the namespace's last client; list and watch with a metadata.name field selector are authorised by resourceNames).
    // A create cannot be limited by name.
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: [GATEWAY_CA_CONFIGMAP], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    // The event recorder creates an Event, then patches its count when the same event repeats.
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    // The operator registers its webhook configurations and keeps their caBundle current.
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], verbs: ['get', 'create', 'update', 'patch'] },
    // Conversion webhook address and caBundle are merge-patched into the multi-version CRDs.
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'patch', 'update'] },
    // /metrics is served only to a token whose user may get the URL /metrics (run --metrics-auth, as controller-runtime's filter).
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}

/** Operator namespace: the leader-election Lease and the webhook's and gateway's serving-certificate Secrets. */
export function operatorNamespaceRules(): PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    // The machine catalogue of DeployedModel containerSpec, followed live: list and watch with a metadata.name
    // field selector are authorised by resourceNames, so the operator can read no other ConfigMap.
    { apiGroups: [''], resources: ['configmaps'], resourceNames: [MACHINE_TYPES_CONFIGMAP], verbs: ['get', 'list', 'watch'] },
  ];
}

/**
 * Sign-in namespace: the sign-in API watches Shops and users there (and reports their status),
 * keeps SignInSessions, reads password Secrets and creates the token signing-key Secret.
 */
export function signinNamespaceRules(): PolicyRule[] {
  return [
    { apiGroups: [POS], resources: ['shops', 'shopusers', 'adminusers'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [POS], resources: ['shops/status', 'shopusers/status', 'adminusers/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: [POS], resources: ['signinsessions'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    // Password Secrets are watched by label (pos.endpoint-operator.dev/password=true), which RBAC cannot
    // express, so list/watch stay namespace-wide; writes are only the signing-key Secret's: created
    // once (create cannot be limited by name) and updated by a key rotation.
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [SIGNIN_KEY_SECRET], verbs: ['update'] },
    // The per-account sign-in attempt budget shared by replicas (src/signin/kube/attempt-ledger.ts).
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
  ];
}

function subject(values: DeployValues): { kind: 'ServiceAccount'; name: string; namespace: string } {
  return { kind: 'ServiceAccount', name: NAME, namespace: values.namespace };
}

function roleAndBinding(values: DeployValues, namespace: string, name: string, rules: PolicyRule[]): object[] {
  const metadata = { name, namespace, labels: commonLabels('rbac') };
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata, rules },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [subject(values)] },
  ];
}

export function rbacManifests(values: DeployValues): object[] {
  const cluster = { name: NAME, labels: commonLabels('rbac') };
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: cluster, rules: clusterRules() },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: cluster, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME }, subjects: [subject(values)] },
    ...roleAndBinding(values, values.namespace, NAME, operatorNamespaceRules()),
    ...(values.signin.enabled ? roleAndBinding(values, values.signin.namespace, `${NAME}-signin`, signinNamespaceRules()) : []),
  ];
}
