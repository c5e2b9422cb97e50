/**
 * The informers and watch relations of DeployedModels with spec.containerSpec, for one shard: the
 * Deployments, HPAs, PDBs, NetworkPolicies and Pods the operator labelled (a label-selector-filtered list and watch,
 * so memory follows the operator's own models), and which model or endpoint each change concerns.
 */
import type { Controller } from '../runtime/controller.js';
import { Informer, kubeListerWatcher } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import { keyOf, objectKey, type KubeObject, type ResourceRef } from '../api/common/kube-object.js';
import type { Logger } from '../base/logger.js';
import { modelEndpointKey, type Informers } from '../reconcilers/context.js';
import type { MachineCatalogueSource } from '../api/prediction/v1/machine-catalogue.js';
import type { BucketLookup } from '../reconcilers/serving/artifact-volume.js';
import {
  addServingIndexes,
  deploymentsResource,
  hpasResource,
  networkPoliciesResource,
  pdbsResource,
  podsResource,
  SERVING_SELECTOR,
  type ServingInformers,
} from '../reconcilers/serving/serving-apply.js';
import type { ServingContext } from '../reconcilers/serving/serving-model.js';
import { specOf, statusOf } from '../api/typed-spec.js';
import { MODEL_UID_LABEL } from '../reconcilers/serving/serving-plan.js';
import type { ModelNetworkPolicySettings } from '../reconcilers/serving/network-policy-plan.js';

const MODELS_BY_UID = 'byUid';

export interface ServingWiring {
  readonly context: ServingContext;
  readonly informers: Informer[];
  /** Declares the watch relations on the shard's DeployedModel and PredictionEndpoint controllers. */
  watch(models: Controller, endpoints: Controller): void;
}

export function servingWiring(
  client: KubeClient,
  namespace: string | undefined,
  informers: Informers,
  catalogue: MachineCatalogueSource,
  buckets: BucketLookup,
  networkPolicy: ModelNetworkPolicySettings | undefined,
  log: Logger,
): ServingWiring {
  const filtered = (ref: ResourceRef): Informer =>
    new Informer(kubeListerWatcher(client, ref, namespace, { labelSelector: SERVING_SELECTOR }), {
      name: `${ref.group || 'core'}/${ref.version}/${ref.plural}${namespace ? `@${namespace}` : ''}`,
      logger: log,
    });
  const serving: ServingInformers = {
    deployments: filtered(deploymentsResource),
    hpas: filtered(hpasResource),
    pdbs: filtered(pdbsResource),
    // Watched with the policy off too: the operator then finds the policies it made, and deletes them.
    networkPolicies: filtered(networkPoliciesResource),
    pods: filtered(podsResource),
    services: informers.services,
  };
  addServingIndexes(serving);
  informers.deployedModels.addIndex(MODELS_BY_UID, (m) => [objectKey(m.metadata.namespace, m.metadata.uid ?? '')]);

  // Pods carry the model's uid label (their owner is a ReplicaSet); the other objects name the model as their controller.
  const modelOf = (o: KubeObject): KubeObject[] => {
    const owner = o.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'DeployedModel');
    const uid = owner?.uid ?? o.metadata.labels?.[MODEL_UID_LABEL];
    return uid === undefined
      ? []
      : informers.deployedModels.byIndex(MODELS_BY_UID, objectKey(o.metadata.namespace, uid));
  };
  const modelKeys = (o: KubeObject): string[] => modelOf(o).map(keyOf);
  const endpointKeys = (o: KubeObject): string[] =>
    modelOf(o).flatMap((m) => {
      const key = modelEndpointKey(m);
      return key === undefined ? [] : [key];
    });

  return {
    context: { informers: serving, catalogue, buckets, networkPolicy },
    informers: [serving.deployments, serving.hpas, serving.pdbs, serving.networkPolicies, serving.pods],
    watch(models, endpoints) {
      // A child changed or went (a replica became available, a hand edit, a deletion): report it, or put it back.
      for (const i of [
        serving.deployments,
        serving.hpas,
        serving.pdbs,
        serving.networkPolicies,
        serving.pods,
        informers.services,
      ])
        models.watches(i, modelKeys);
      // The endpoint lists each model's readiness, which follows its Deployment and pods.
      endpoints.watches(serving.deployments, endpointKeys);
      endpoints.watches(serving.pods, endpointKeys);
      // Another catalogue is in effect: a model waiting for its machine type may deploy now. The others reconcile
      // to no change (their Deployments keep the machine they were created with), so every one is simply queued.
      catalogue.onChange(() => {
        for (const m of informers.deployedModels.list())
          if (
            specOf.deployedModel(m).containerSpec !== undefined ||
            statusOf.deployedModel(m).containerSpec !== undefined
          )
            models.enqueue(keyOf(m));
      });
    },
  };
}
