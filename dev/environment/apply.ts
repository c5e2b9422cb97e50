import { allKinds } from '../../src/api/kinds.js';
import type { KubeClient, KubeObject, ResourceRef } from '../../src/kube/kube-client.js';

/** The field manager `dev` applies with, so `kubectl apply --server-side` by a person shows who owns what. */
export const DEV_FIELD_MANAGER = 'endpoint-operator-dev';

const CORE: Record<string, ResourceRef> = {
  'v1/Namespace': { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  'v1/Secret': { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  'v1/ConfigMap': { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  'v1/Service': { group: '', version: 'v1', plural: 'services', namespaced: true },
  'v1/ServiceAccount': { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true },
  'rbac.authorization.k8s.io/v1/ClusterRole': {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterroles',
    namespaced: false,
  },
  'rbac.authorization.k8s.io/v1/RoleBinding': {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'rolebindings',
    namespaced: true,
  },
  'discovery.k8s.io/v1/EndpointSlice': {
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    namespaced: true,
  },
  'discovery.k8s.io/v1beta1/EndpointSlice': {
    group: 'discovery.k8s.io',
    version: 'v1beta1',
    plural: 'endpointslices',
    namespaced: true,
  },
};

/** The REST resource of a manifest: the operator's kinds and the few core kinds the examples use. */
export function resourceFor(apiVersion: string, kind: string): ResourceRef | undefined {
  const core = CORE[`${apiVersion}/${kind}`];
  if (core) return core;
  const [group, version] = apiVersion.split('/');
  const def = allKinds.find((k) => k.group === group && k.kind === kind);
  if (!def || !def.versions.some((v) => v.name === version) || version === undefined) return undefined;
  return { group: def.group, version, plural: def.plural, namespaced: def.scope !== 'Cluster' };
}

/** Server-side apply (create or update) of one object; returns the admission warnings. */
export async function applyObject(client: KubeClient, obj: KubeObject): Promise<KubeObject> {
  const ref = resourceFor(obj.apiVersion ?? '', obj.kind ?? '');
  if (!ref) throw new Error(`${obj.kind ?? '?'} (${obj.apiVersion ?? '?'}) is not a kind dev knows how to apply`);
  const name = obj.metadata.name;
  if (!name) throw new Error(`${obj.kind ?? '?'} without metadata.name`);
  const namespace = ref.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
  return client.patch(ref, namespace, name, obj, { type: 'apply', fieldManager: DEV_FIELD_MANAGER, force: true });
}

export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await applyObject(client, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}
