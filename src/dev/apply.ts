import { allKinds } from '../api/kinds.js';
import { crdFor, type CustomResourceDefinition } from '../api/crd/generate.js';
import type { KubeClient, KubeObject, ResourceRef } from '../runtime/kube-client.js';

/** The field manager `dev` applies with, so `kubectl apply --server-side` by a person shows who owns what. */
export const DEV_FIELD_MANAGER = 'endpoint-operator-dev';

const CORE: Record<string, ResourceRef> = {
  'v1/Namespace': { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  'v1/Secret': { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  'v1/ConfigMap': { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
};

export const CRD_REF: ResourceRef = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false };

/** The REST resource of a manifest: the operator's kinds and the few core kinds the examples use. */
export function resourceFor(apiVersion: string, kind: string): ResourceRef | undefined {
  const core = CORE[`${apiVersion}/${kind}`];
  if (core) return core;
  const [group, version] = apiVersion.split('/');
  const def = allKinds.find((k) => k.group === group && k.kind === kind);
  if (!def || !def.versions.some((v) => v.name === version) || version === undefined) return undefined;
  return { group: def.group, version, plural: def.plural, namespaced: true };
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

/**
 * Installs (or updates) every CRD and waits until the API server serves them. Create/replace rather
 * than server-side apply: before Kubernetes 1.25 the CRD type has no `x-kubernetes-validations`, and
 * apply refuses unknown fields where create/replace drop them (the CEL rules then simply don't run).
 */
export async function installCrds(client: KubeClient, timeoutMs = 60_000): Promise<CustomResourceDefinition[]> {
  const crds = allKinds.map((def) => crdFor(def));
  for (const crd of crds) {
    const current = await client.get(CRD_REF, undefined, crd.metadata.name);
    if (!current) {
      await client.create(CRD_REF, undefined, crd, { fieldManager: DEV_FIELD_MANAGER });
      continue;
    }
    // Keep the conversion settings the webhook installer injected (URL or Service, caBundle).
    const conversion = (current as { spec?: { conversion?: unknown } }).spec?.conversion;
    const body = { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion }, spec: { ...crd.spec, ...(crd.spec.conversion && conversion ? { conversion } : {}) } };
    await client.replace(CRD_REF, undefined, crd.metadata.name, body, { fieldManager: DEV_FIELD_MANAGER });
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const current = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(CRD_REF, undefined, crd.metadata.name);
      if (current?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} was not Established within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return crds;
}

export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await applyObject(client, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}
