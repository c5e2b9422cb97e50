/**
 * The DeployedModel ↔ Service/EndpointSlice relation: indexes that find a model's Service and its
 * slices in the caches, and the models a changed Service or slice concerns (so readiness follows
 * the world through watches, never by polling).
 */
import type { DeployedModelBackend } from '../api/prediction/v1/backend.js';
import {
  decodeEndpointSlice,
  decodeService,
  SERVICE_NAME_LABEL,
  type EndpointSlice,
} from '../runtime/endpoint-slices.js';
import type { Informer } from '../kube/informer.js';
import { keyOf, objectKey, type KubeObject } from '../api/common/kube-object.js';
import { backendReadiness, type BackendReadiness } from './backend-readiness.js';
import { specOf, statusOf } from '../api/typed-spec.js';
import { SERVING_PORT_NAME, servingName } from '../api/prediction/v1/serving-names.js';

export interface BackendInformers {
  readonly deployedModels: Informer;
  /** core/v1 Services. */
  readonly services: Informer;
  /** discovery.k8s.io EndpointSlices (v1, or v1beta1 before Kubernetes 1.21). */
  readonly endpointSlices: Informer;
}

const BackendIndex = {
  /** DeployedModels by `namespace/<the Service their calls go to>` (servedBackendOf). */
  modelsByService: 'byBackendService',
  /** EndpointSlices by `namespace/<kubernetes.io/service-name label>`. */
  slicesByService: 'byService',
} as const;

/** `spec.backend` when it decodes (an invalid one is the validator's to report, and reads as none). */
export function backendOf(model: KubeObject): DeployedModelBackend | undefined {
  return specOf.deployedModel(model).backend;
}

/**
 * Where a model's calls go: `spec.backend`, or for `spec.containerSpec` the port of the Service the operator
 * creates for its replicas, whose EndpointSlices the gateway routes by too (serving-names.ts).
 */
function servedBackendOf(model: KubeObject): Pick<DeployedModelBackend, 'service' | 'url'> | undefined {
  const spec = specOf.deployedModel(model);
  // status.containerSpec: the version of a Model it names, once resolved (model-reference.ts).
  if (spec.containerSpec !== undefined || statusOf.deployedModel(model).containerSpec !== undefined)
    return { service: { name: servingName(model.metadata.name ?? ''), port: SERVING_PORT_NAME } };
  return spec.backend;
}

function backendServiceKey(model: KubeObject): string[] {
  const name = servedBackendOf(model)?.service?.name;
  return name === undefined ? [] : [objectKey(model.metadata.namespace, name)];
}

function sliceServiceKey(slice: KubeObject): string[] {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name === undefined ? [] : [objectKey(slice.metadata.namespace, name)];
}

/** Adds the indexes; call once, before the informers sync. */
export function addBackendIndexes(informers: BackendInformers): void {
  informers.deployedModels.addIndex(BackendIndex.modelsByService, backendServiceKey);
  informers.endpointSlices.addIndex(BackendIndex.slicesByService, sliceServiceKey);
}

/** The DeployedModels whose backend is the Service `service`. */
export function modelsOfService(informers: BackendInformers, service: KubeObject): KubeObject[] {
  return informers.deployedModels.byIndex(BackendIndex.modelsByService, keyOf(service));
}

/** The DeployedModels whose backend is the Service that `slice` belongs to. */
export function modelsOfSlice(informers: BackendInformers, slice: KubeObject): KubeObject[] {
  return sliceServiceKey(slice).flatMap((key) => informers.deployedModels.byIndex(BackendIndex.modelsByService, key));
}

/** Whether the model's backend can be called, from the caches. */
export function readinessOf(informers: BackendInformers, model: KubeObject): BackendReadiness {
  const backend = servedBackendOf(model);
  const namespace = model.metadata.namespace ?? '';
  const name = backend?.service?.name;
  if (name === undefined) return backendReadiness({ backend, namespace, service: undefined, slices: [] });
  const serviceObj = informers.services.get(namespace, name);
  const service = serviceObj === undefined ? undefined : decodeService(serviceObj);
  const slices = informers.endpointSlices
    .byIndex(BackendIndex.slicesByService, objectKey(namespace, name))
    .map(decodeEndpointSlice)
    .filter((s): s is EndpointSlice => s !== undefined);
  return backendReadiness({ backend, namespace, service, slices });
}
