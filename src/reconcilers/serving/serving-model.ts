/**
 * The DeployedModel reconciler's view of `spec.containerSpec`: whether a model is served by replicas
 * the operator runs, the plan input for it, and what its objects show. Shared by the DeployedModel
 * and PredictionEndpoint reconcilers, so the endpoint's status.deployedModels[].ready is the model's own verdict.
 */
import type { ContainerSpec } from '../../api/prediction/v1/container-spec.js';
import type { DeployedModelSpec } from '../../api/prediction/v1/deployed-model-schema.js';
import type { KubeObject } from '../../api/common/kube-object.js';
import type { ModelState } from '../deployed-model-ids.js';
import { specOf } from '../../api/typed-spec.js';
import type { MachineCatalogueSource } from '../../api/prediction/v1/machine-catalogue.js';
import { observe, type ServingInformers } from './serving-apply.js';
import type { BucketLookup } from './artifact-volume.js';
import type { ModelNetworkPolicySettings } from './network-policy-plan.js';
import { hpaManifest, pdbManifest, servingName, type ServingInput } from './serving-plan.js';
import type { ServingObservation } from './serving-status.js';

export interface ServingContext {
  readonly informers: ServingInformers;
  /** Follows the ConfigMap: read per reconcile. */
  readonly catalogue: MachineCatalogueSource;
  /** The bucket map, followed by an informer: read per reconcile. */
  readonly buckets: BucketLookup;
  /** Who may reach a model's pods; absent: no NetworkPolicy (the ones the operator made are deleted). */
  readonly networkPolicy: ModelNetworkPolicySettings | undefined;
}

export interface ServingReport extends ServingObservation {
  readonly names: {
    deployment: string;
    service: string;
    horizontalPodAutoscaler?: string;
    podDisruptionBudget?: string;
    networkPolicy?: string;
  };
}

/**
 * The plan input of a model with a containerSpec once its id is known; undefined otherwise. `spec` is the spec
 * to serve: the model's own, or with the version of the Model it names in place (model-reference.ts servedSpec).
 */
export function servingInput(
  model: KubeObject,
  state: ModelState | undefined,
  spec: Partial<DeployedModelSpec> = specOf.deployedModel(model),
): ServingInput | undefined {
  if (
    spec.containerSpec === undefined ||
    spec.endpointRef === undefined ||
    spec.model === undefined ||
    state?.state !== 'deployed'
  )
    return undefined;
  return { model, spec: spec as DeployedModelSpec & { containerSpec: ContainerSpec }, id: state.id };
}

export function servingReport(
  serving: ServingContext | undefined,
  model: KubeObject,
  state: ModelState | undefined,
  spec?: Partial<DeployedModelSpec>,
): ServingReport | undefined {
  if (serving === undefined) return undefined;
  const input = servingInput(model, state, spec);
  if (input === undefined) return undefined;
  const name = servingName(model.metadata.name ?? '');
  const names: ServingReport['names'] = { deployment: name, service: name };
  if (hpaManifest(input) !== undefined) names.horizontalPodAutoscaler = name;
  if (pdbManifest(input) !== undefined) names.podDisruptionBudget = name;
  if (serving.networkPolicy !== undefined) names.networkPolicy = name;
  return { ...observe(serving, input), names };
}
