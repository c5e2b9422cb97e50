/**
 * Makes the objects of a DeployedModel's containerSpec match the plan (serving-plan.ts): server-side
 * apply under the operator's field manager for what is missing or differs, deletion of an HPA or PDB
 * the spec no longer asks for (and of the NetworkPolicy when the operator makes none). Owner references make garbage collection remove the rest with the model.
 */
import { isNotFound } from '../../kube/api-error.js';
import type { Informer } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { isRecord, type KubeObject, type ResourceRef } from '../../api/common/kube-object.js';
import { servicesResource } from '../../runtime/endpoint-slices.js';
import { FIELD_MANAGER } from '../field-manager.js';
import { resolveArtifact, type BucketLookup } from './artifact-volume.js';
import type { MachineCatalogueSource } from '../../api/prediction/v1/machine-catalogue.js';
import { machineFor, withMachinePin } from './machine-pin.js';
import { networkPolicyManifest, type ModelNetworkPolicySettings } from './network-policy-plan.js';
import {
  deploymentManifest,
  hpaManifest,
  MODEL_UID_LABEL,
  pdbManifest,
  replicasOf,
  serviceManifest,
  servingName,
  type ServingInput,
} from './serving-plan.js';
import { observeServing, type ServingObservation } from './serving-status.js';

export const deploymentsResource: ResourceRef = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  namespaced: true,
};
export const hpasResource: ResourceRef = {
  group: 'autoscaling',
  version: 'v2',
  plural: 'horizontalpodautoscalers',
  namespaced: true,
};
export const pdbsResource: ResourceRef = {
  group: 'policy',
  version: 'v1',
  plural: 'poddisruptionbudgets',
  namespaced: true,
};
export const networkPoliciesResource: ResourceRef = {
  group: 'networking.k8s.io',
  version: 'v1',
  plural: 'networkpolicies',
  namespaced: true,
};
export const podsResource: ResourceRef = { group: '', version: 'v1', plural: 'pods', namespaced: true };

/**
 * The field manager that sets the initial replica count when an HPA owns it: the operator's own manager
 * then leaves `replicas` out, and server-side apply does not reset a field another manager still holds.
 */
const REPLICAS_MANAGER = 'endpoint-operator-initial-replicas';

/**
 * Only objects the operator labelled: the Pod, Deployment, HPA, PDB and NetworkPolicy informers list and watch
 * these alone, so the operator's memory follows its own models, not the cluster's workloads.
 */
export const SERVING_SELECTOR = MODEL_UID_LABEL;

export interface ServingInformers {
  readonly deployments: Informer;
  readonly hpas: Informer;
  readonly pdbs: Informer;
  readonly networkPolicies: Informer;
  readonly pods: Informer;
  /** Every Service of the scope (shared with spec.backend readiness). */
  readonly services: Informer;
}

/** The index of a model's serving objects and pods: by `namespace/uid`. */
export const BY_MODEL_UID = 'byDeployedModelUid';

export function modelUidKey(obj: KubeObject): string[] {
  const uid = obj.metadata.labels?.[MODEL_UID_LABEL];
  return uid === undefined ? [] : [`${obj.metadata.namespace ?? ''}/${uid}`];
}

export function addServingIndexes(informers: ServingInformers): void {
  for (const i of [informers.deployments, informers.hpas, informers.pdbs, informers.networkPolicies, informers.pods])
    i.addIndex(BY_MODEL_UID, modelUidKey);
}

/** Whether `want` is already in `live`: every field it sets has that value (the server adds defaults). */
export function contains(live: unknown, want: unknown): boolean {
  if (Array.isArray(want))
    return Array.isArray(live) && live.length === want.length && want.every((w, i) => contains(live[i], w));
  if (isRecord(want))
    return isRecord(live) && Object.entries(want).every(([k, v]) => v === undefined || contains(live[k], v));
  return live === want || (typeof want === 'number' && String(want) === live);
}

export interface ServingStep {
  readonly client: KubeClient;
  readonly informers: ServingInformers;
  readonly catalogue: MachineCatalogueSource;
  /** The bucket map (ModelArtifactBucket objects), read per reconcile. */
  readonly buckets: BucketLookup;
  /** Absent: the operator makes no NetworkPolicy, and deletes the ones it made. */
  readonly networkPolicy: ModelNetworkPolicySettings | undefined;
  readonly signal: AbortSignal;
}

function ownedBy(obj: KubeObject | undefined, uid: string): boolean {
  return obj?.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller === true) === true;
}

/** What the cache holds for the model now, read as its status; no writes. */
export function observe(step: Omit<ServingStep, 'client' | 'signal'>, input: ServingInput): ServingObservation {
  const { model } = input;
  const name = servingName(model.metadata.name ?? '');
  const ns = model.metadata.namespace;
  const live = step.informers.deployments.get(ns, name);
  const deployment = ownedBy(live, model.metadata.uid ?? '') ? live : undefined;
  const machine = machineFor(input.spec, step.catalogue.current(), deployment);
  const artifact = resolveArtifact(input.spec.artifactUri, step.buckets);
  const key = `${ns ?? ''}/${model.metadata.uid ?? ''}`;
  return observeServing({
    replicas: replicasOf(input.spec),
    deploymentName: name,
    deployment,
    pods: step.informers.pods.byIndex(BY_MODEL_UID, key),
    machineProblem: machine.ok ? undefined : machine.message,
    artifactProblem: artifact.ok ? undefined : artifact.message,
  });
}

/**
 * Applies what differs; a machine the catalogue lacks, or a bucket the bucket map lacks, creates nothing (the
 * status says why). The Deployment
 * keeps the machine it was created with (machine-pin.ts): a catalogue edit does not roll a running model.
 */
export async function applyServing(step: ServingStep, input: ServingInput): Promise<void> {
  const { client, informers, signal } = step;
  const ns = input.model.metadata.namespace;
  const name = servingName(input.model.metadata.name ?? '');
  const uid = input.model.metadata.uid ?? '';
  const liveDeployment = informers.deployments.get(ns, name);
  const machine = machineFor(
    input.spec,
    step.catalogue.current(),
    ownedBy(liveDeployment, uid) ? liveDeployment : undefined,
  );
  const artifact = resolveArtifact(input.spec.artifactUri, step.buckets);
  if (!machine.ok || !artifact.ok) return;
  const deployment = (withReplicas: boolean): KubeObject =>
    withMachinePin(deploymentManifest(input, machine, withReplicas, artifact.mount), machine);
  const apply = async (
    ref: ResourceRef,
    live: KubeObject | undefined,
    want: KubeObject,
    manager = FIELD_MANAGER,
  ): Promise<void> => {
    if (live !== undefined && ownedBy(live, uid) && contains(live, want)) return;
    await client.patch(ref, ns, name, want, { type: 'apply', fieldManager: manager, force: true, signal });
  };
  const remove = async (ref: ResourceRef, live: KubeObject | undefined): Promise<void> => {
    if (live === undefined || !ownedBy(live, uid)) return;
    await client
      .delete(ref, ns, name, { preconditions: { uid: live.metadata.uid ?? '' }, signal })
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
  };

  // The policy before the Deployment: no pod of the model runs while any pod may call it.
  const liveNetworkPolicy = informers.networkPolicies.get(ns, name);
  if (step.networkPolicy !== undefined)
    await apply(networkPoliciesResource, liveNetworkPolicy, networkPolicyManifest(input, step.networkPolicy));
  else await remove(networkPoliciesResource, liveNetworkPolicy);
  const hpa = hpaManifest(input);
  if (hpa !== undefined) {
    // The autoscaler owns the count; a start value (or one brought back within [min, max]) comes from a
    // separate manager, so the operator's own apply can leave the field out without resetting it.
    const { min, max } = replicasOf(input.spec);
    const current =
      isRecord(liveDeployment?.spec) && typeof liveDeployment.spec.replicas === 'number'
        ? liveDeployment.spec.replicas
        : undefined;
    const wanted = Math.min(max, Math.max(min, current ?? min));
    if (current !== wanted || !ownedBy(liveDeployment, uid)) {
      const base = deployment(true);
      await client.patch(
        deploymentsResource,
        ns,
        name,
        { ...base, spec: { ...(base.spec as Record<string, unknown>), replicas: wanted } },
        { type: 'apply', fieldManager: REPLICAS_MANAGER, force: true, signal },
      );
    }
  }
  await apply(deploymentsResource, liveDeployment, deployment(hpa === undefined));
  await apply(servicesResource, informers.services.get(ns, name), serviceManifest(input));
  if (hpa !== undefined) await apply(hpasResource, informers.hpas.get(ns, name), hpa);
  else await remove(hpasResource, informers.hpas.get(ns, name));
  const pdb = pdbManifest(input);
  if (pdb !== undefined) await apply(pdbsResource, informers.pdbs.get(ns, name), pdb);
  else await remove(pdbsResource, informers.pdbs.get(ns, name));
}
