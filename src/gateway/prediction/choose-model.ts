/**
 * Stage 5, choose the model: the endpoint the path names (from the informer caches), then the
 * deployed model that serves the call (`:explain`'s deployedModelId, else the traffic split, sticky
 * when the caller sends the sticky header), and where that model is served.
 */
import type { ContainerProtocol } from '../../api/prediction/v1/container-spec.js';
import { userTextInMessage } from '../../api/common/text.js';
import { GoogleApiError } from '../google-errors.js';
import type { ResolvedEndpoint, ResolvedModel, RoutingTable, Target } from '../routing-table.js';
import type { TrafficSplitter } from '../traffic-split.js';
import { endpointNotFound, type AdmittedCall } from './admit.js';

/**
 * The endpoint the call names. With auth on, only the object that was authorised: an endpoint
 * whose status.name matches but that lives elsewhere is NOT_FOUND, as one that does not exist.
 */
export function findEndpoint(
  routing: Pick<RoutingTable, 'endpoint'>,
  call: AdmittedCall,
  authEnabled: boolean,
): ResolvedEndpoint {
  const endpoint = routing.endpoint(call.resourceName);
  if (endpoint === undefined) throw endpointNotFound(call.resourceName);
  if (authEnabled && (endpoint.namespace !== call.target?.namespace || endpoint.name !== call.target.name))
    throw endpointNotFound(call.resourceName);
  return endpoint;
}

/** Where a chosen deployed model is called: its ready targets, and its backend's protocol and model name. */
export interface Serving {
  readonly model: ResolvedModel;
  readonly targets: readonly Target[];
  readonly protocol: ContainerProtocol;
  readonly modelName: string;
  /** The path of a `Vertex` model server's predict route. */
  readonly predictRoute: string | undefined;
}

export interface ModelChoice {
  readonly splitter: Pick<TrafficSplitter, 'pick'>;
  /** The sticky header's value on this call, if the gateway has one and the caller sent it. */
  readonly sticky: string | undefined;
}

/** The deployed model that serves a call on `endpoint`, or the refusal; `explicitId`: :explain's deployedModelId. */
export function chooseModel(endpoint: ResolvedEndpoint, explicitId: unknown, choice: ModelChoice): ResolvedModel {
  let id: string | undefined;
  if (explicitId !== undefined && explicitId !== '' && explicitId !== null) {
    // :explain's deployedModelId overrides the split (Vertex: "the deployed model to explain").
    id = String(explicitId);
    if (!endpoint.models.has(id))
      throw new GoogleApiError(
        'NOT_FOUND',
        `Deployed model ${userTextInMessage(id)} not found in endpoint ${endpoint.resourceName}.`,
      );
  } else {
    if (endpoint.split.length === 0) {
      throw new GoogleApiError(
        'FAILED_PRECONDITION',
        `Endpoint ${endpoint.resourceName} accepts no traffic: its traffic split is empty. Set spec.trafficSplit on PredictionEndpoint ${endpoint.namespace}/${endpoint.name}.`,
      );
    }
    id = choice.splitter.pick(endpoint.resourceName, endpoint.split, endpoint.signature, choice.sticky);
    if (id === undefined)
      throw new GoogleApiError('FAILED_PRECONDITION', `Endpoint ${endpoint.resourceName} accepts no traffic.`);
  }
  const model = endpoint.models.get(id);
  if (model === undefined) {
    throw new GoogleApiError(
      'UNAVAILABLE',
      `Deployed model ${id} has traffic in the split of endpoint ${endpoint.resourceName} but is not deployed to it (no DeployedModel with that id).`,
    );
  }
  if (model.unusable !== undefined) {
    const status = model.unusable.includes('does not exist') ? 'UNAVAILABLE' : 'FAILED_PRECONDITION';
    throw new GoogleApiError(status, `Deployed model ${id} cannot be called: ${model.unusable}.`);
  }
  return model;
}

/** The model's ready targets and backend, or the error that says why it cannot be called. */
export function servingOf(routing: Pick<RoutingTable, 'targets'>, model: ResolvedModel): Serving {
  const targets = routing.targets(model);
  if ('unavailable' in targets)
    throw new GoogleApiError(
      'UNAVAILABLE',
      `Deployed model ${model.id} (${model.deployedModelName}) is unavailable: ${targets.unavailable}.`,
    );
  const backend = model.backend;
  if (backend === undefined)
    throw new GoogleApiError('FAILED_PRECONDITION', `Deployed model ${model.id} has no backend.`);
  return {
    model,
    targets: targets.targets,
    protocol: backend.protocol,
    modelName: backend.modelName,
    predictRoute: backend.protocol === 'Vertex' ? backend.predictRoute : undefined,
  };
}
