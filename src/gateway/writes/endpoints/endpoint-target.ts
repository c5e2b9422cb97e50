/**
 * What every EndpointService write shares: the endpoint its request names (`projects/{p}/locations/{l}/endpoints/{e}`,
 * the project mapped to a namespace, the id the PredictionEndpoint's metadata.name), the objects as the apiserver
 * holds them now (read fresh, with managedFields: the informer's cache drops them), and the Endpoint as Vertex
 * returns it, built from those objects (../../endpoints/vertex-endpoint.ts).
 */
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';
import { resources } from '../../../api/kind-bindings.js';
import { endpointResourceName } from '../../../api/prediction/v1/names.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import { vertexEndpoint, type VertexDeployedModel, type VertexEndpoint } from '../../endpoints/vertex-endpoint.js';
import { GoogleApiError } from '../../google-errors.js';
import { nameParts } from '../../grpc/read-services.js';
import type { WriteObject } from '../apply.js';
import type { WriteGate } from '../caller.js';
import type { OperationsContext } from '../operations/operations-service.js';
import type { RandomInt } from './ids.js';

export interface EndpointWritesContext {
  readonly client: KubeClient;
  readonly gate: WriteGate;
  readonly random: RandomInt;
  /** What a write's Operation is derived through (../operations/operations-service.ts operationOfWrite). */
  readonly operations: OperationsContext;
}

export const ENDPOINT_PATTERN = 'projects/*/locations/*/endpoints/*';
export const LOCATION_PATTERN = 'projects/*/locations/*';

export interface EndpointTarget {
  readonly project: string;
  readonly location: string;
  /** The endpoint id: the PredictionEndpoint's metadata.name. */
  readonly endpoint: string;
  /** `projects/{p}/locations/{l}/endpoints/{e}`. */
  readonly name: string;
}

/** The endpoint a request's `field` names; INVALID_ARGUMENT naming the field when it is not an endpoint's name. */
export function endpointTarget(field: string, value: string): EndpointTarget {
  const [, project = '', , location = '', , endpoint = ''] = nameParts(field, value, ENDPOINT_PATTERN);
  return { project, location, endpoint, name: endpointResourceName(project, location, endpoint) };
}

export function endpointNotFound(name: string): GoogleApiError {
  return new GoogleApiError('NOT_FOUND', `Endpoint ${JSON.stringify(name)} not found.`);
}

export function endpointObject(namespace: string, name: string): WriteObject {
  return {
    resource: resources.predictionEndpoints,
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    namespace,
    name,
    described: `PredictionEndpoint "${name}" in namespace "${namespace}"`,
  };
}

export function deployedModelObject(namespace: string, name: string): WriteObject {
  return {
    resource: resources.deployedModels,
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    namespace,
    name,
    described: `DeployedModel "${name}" in namespace "${namespace}"`,
  };
}

/**
 * The PredictionEndpoint the request names, as stored now; NOT_FOUND when there is none, or when its status.name
 * (the operator's project and location) is another endpoint's name than the request's.
 */
export async function readEndpoint(
  ctx: EndpointWritesContext,
  namespace: string,
  target: EndpointTarget,
  signal?: AbortSignal,
): Promise<KubeObject> {
  const pe = await ctx.client.get(resources.predictionEndpoints, namespace, target.endpoint, { signal });
  const statusName = pe !== undefined && isRecord(pe.status) ? pe.status.name : undefined;
  if (pe === undefined || (typeof statusName === 'string' && statusName !== target.name))
    throw endpointNotFound(target.name);
  return pe;
}

/** The DeployedModels whose spec.endpointRef names `endpoint`, as stored now. */
export async function deployedModelsOf(
  ctx: EndpointWritesContext,
  namespace: string,
  endpoint: string,
  signal?: AbortSignal,
): Promise<KubeObject[]> {
  const { items } = await ctx.client.list(resources.deployedModels, namespace, { signal });
  return items.filter(
    (dm) => isRecord(dm.spec) && isRecord(dm.spec.endpointRef) && dm.spec.endpointRef.name === endpoint,
  );
}

/** A DeployedModel's id on its endpoint: spec.id, else the one the operator assigned (status.id). */
export function deployedIdOf(dm: KubeObject): string | undefined {
  const id = (isRecord(dm.spec) ? dm.spec.id : undefined) ?? (isRecord(dm.status) ? dm.status.id : undefined);
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The Endpoint as GetEndpoint returns it, its deployed models read from `models`. */
export function endpointAnswer(pe: KubeObject, models: readonly KubeObject[]): VertexEndpoint {
  return vertexEndpoint(pe, (name) => models.find((m) => m.metadata.name === name));
}

/** One deployed model of the Endpoint as GetEndpoint lists it, by id. */
export function deployedModelAnswer(
  pe: KubeObject,
  models: readonly KubeObject[],
  id: string,
): VertexDeployedModel | undefined {
  return endpointAnswer(pe, models).deployedModels?.find((m) => m.id === id);
}
