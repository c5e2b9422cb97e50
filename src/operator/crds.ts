/**
 * Installing the project's CRDs through the API, shared by `dev` and the integration tests.
 * Create/replace rather than server-side apply: before Kubernetes 1.25 the CRD type has no
 * `x-kubernetes-validations`, and apply (like kubectl's client-side validation) refuses the unknown
 * field where create/replace drop it (the CEL rules then simply don't run).
 */
import type { KindDefinition } from '../api/common/kind.js';
import { allKinds } from '../api/kinds.js';
import { crdFor, DEFAULT_CRD_OPTIONS, type CrdOptions, type CustomResourceDefinition } from '../api/crd/generate.js';
import type { KubeClient, ResourceRef } from '../kube/kube-client.js';
import { modelKind } from '../api/prediction/v1/kinds.js';
import { modelPolicyObjects } from '../api/prediction/v1/model-policy.js';

const POLICY_REFS: Readonly<Record<string, ResourceRef>> = {
  ValidatingAdmissionPolicy: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicies',
    namespaced: false,
  },
  ValidatingAdmissionPolicyBinding: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicybindings',
    namespaced: false,
  },
};

export const CRD_REF: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

export interface InstallCrdsOptions {
  readonly kinds?: readonly KindDefinition[];
  /** Conversion address written into new CRDs; an existing CRD keeps what the webhook installer put there. */
  readonly crdOptions?: CrdOptions;
  readonly fieldManager?: string;
  readonly timeoutMs?: number;
}

type CrdState = {
  metadata: { resourceVersion?: string };
  spec?: { conversion?: unknown };
  status?: { conditions?: { type: string; status: string }[] };
};

/** Creates or replaces the CRDs, then waits until they are Established and their kinds are served. */
export async function installCrds(
  client: KubeClient,
  options: InstallCrdsOptions = {},
): Promise<CustomResourceDefinition[]> {
  const kinds = options.kinds ?? allKinds;
  const crds = kinds.map((def) => crdFor(def, options.crdOptions ?? DEFAULT_CRD_OPTIONS));
  const write = options.fieldManager ? { fieldManager: options.fieldManager } : {};
  // Each CRD is its own object: written at once, not one round trip after another.
  await Promise.all(crds.map((crd) => writeCrd(client, crd, write)));
  // The Model kind's in-use rule is a ValidatingAdmissionPolicy (model-policy.ts): installed with its CRD.
  if (kinds.includes(modelKind)) {
    for (const obj of modelPolicyObjects) {
      const ref = POLICY_REFS[obj.kind];
      if (ref === undefined) continue;
      const replace = async (): Promise<void> => {
        const current = await client.get<CrdState>(ref, undefined, obj.metadata.name);
        const meta = { ...obj.metadata, resourceVersion: current?.metadata.resourceVersion };
        await client.replace(ref, undefined, obj.metadata.name, { ...obj, metadata: meta }, write);
      };
      try {
        await client.create(ref, undefined, obj, write);
      } catch (err) {
        // Present already (an earlier install, or another process meanwhile): replace it with this version.
        if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
        await replace();
      }
    }
  }
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const waitFor = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} within ${(options.timeoutMs ?? 60_000) / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await Promise.all(
    crds.map((crd) =>
      waitFor(`CRD ${crd.metadata.name} was not Established`, async () => {
        const got = await client.get<CrdState>(CRD_REF, undefined, crd.metadata.name);
        return got?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      }),
    ),
  );
  // Discovery and the REST handlers lag Established by a moment.
  await Promise.all(
    kinds.map((def) => {
      const version = def.versions.find((v) => v.storage)?.name ?? 'v1';
      return waitFor(`${def.plural}.${def.group} was not served`, () =>
        client
          .list(
            { group: def.group, version, plural: def.plural, namespaced: def.scope !== 'Cluster' },
            def.scope === 'Cluster' ? undefined : 'default',
            { limit: 1 },
          )
          .then(
            () => true,
            () => false,
          ),
      );
    }),
  );
  return crds;
}

/** Creates `crd`, or replaces the one there (keeping the conversion settings the webhook installer injected). */
async function writeCrd(
  client: KubeClient,
  crd: CustomResourceDefinition,
  write: { fieldManager?: string },
): Promise<void> {
  const current = await client.get<CrdState>(CRD_REF, undefined, crd.metadata.name);
  if (!current) {
    try {
      await client.create(CRD_REF, undefined, crd, write);
      return;
    } catch (err) {
      // Another process created it meanwhile: fall through to a replace with its resourceVersion.
      if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
    }
  }
  const latest = current ?? (await client.get<CrdState>(CRD_REF, undefined, crd.metadata.name));
  // Keep the conversion settings the webhook installer injected (URL or Service, caBundle).
  const conversion = latest?.spec?.conversion;
  const spec = { ...crd.spec, ...(crd.spec.conversion && conversion ? { conversion } : {}) };
  await client.replace(
    CRD_REF,
    undefined,
    crd.metadata.name,
    { ...crd, metadata: { ...crd.metadata, resourceVersion: latest?.metadata.resourceVersion }, spec },
    write,
  );
}
