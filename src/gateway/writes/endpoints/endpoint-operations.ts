/**
 * The operations of EndpointService's writes (derived, never stored: ../operations/verbs.ts). Each verb says when
 * its write is done, from the objects as they are now:
 * - createEndpoint, mutateDeployedModel: the object reconciled at the write's generation (Ready, or Stalled → error);
 * - deleteEndpoint, undeployModel: the object with the deleted uid gone (the operator's finalizer releases a
 *   DeployedModel once no traffic reaches it);
 * - deployModel: the DeployedModel Ready at its generation AND the endpoint's effective split (status.trafficSplit,
 *   the one calls are routed by) is the split the write asked for → DeployModelResponse{deployedModel}. Stalled →
 *   the condition's reason; the effective split then never moved (the operator keeps the previous split until
 *   every model it gives traffic is Ready).
 */
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';
import { resources } from '../../../api/kind-bindings.js';
import { jsonEqual } from '../../../api/prediction/v1/etag.js';
import { resourceParts, type OperationRef } from '../operations/operation-name.js';
import { operationOfWrite } from '../operations/operations-service.js';
import { deletedState, reconciledState, type Derived, type OperationVerb } from '../operations/verbs.js';
import { deployedIdOf, deployedModelAnswer, endpointAnswer, type EndpointWritesContext } from './endpoint-target.js';

const V1 = 'google.cloud.aiplatform.v1';

function endpointId(ref: OperationRef): string {
  return resourceParts(ref.resource).id;
}

const createEndpoint: OperationVerb = {
  verb: 'createEndpoint',
  metadataType: `${V1}.CreateEndpointOperationMetadata`,
  responseType: `${V1}.Endpoint`,
  derive: async ({ ref, read }) => {
    const pe = await read(resources.predictionEndpoints, endpointId(ref));
    const state = reconciledState(pe, ref.generation ?? 0, `Endpoint ${ref.resource}`);
    if (state !== 'ready') return state;
    return { done: true, response: { ...endpointAnswer(pe as KubeObject, []) }, object: pe };
  },
};

const deleteEndpoint: OperationVerb = {
  verb: 'deleteEndpoint',
  metadataType: `${V1}.DeleteOperationMetadata`,
  responseType: 'google.protobuf.Empty',
  derive: async ({ ref, read }) => deletedState(await read(resources.predictionEndpoints, endpointId(ref)), ref.uid),
};

/** DeployModel's requested split, kept in the operation's name (`extra.split`, JSON), '' when it left the split alone. */
export const SPLIT_EXTRA = 'split';
/**
 * The watched DeployedModel's generation (`extra.generation`): an operation read back from the endpoint's stamp
 * (ListOperations) carries the endpoint's generation as its own, not the DeployedModel's.
 */
export const WATCHED_GENERATION_EXTRA = 'generation';

async function deployedModelReady(
  ref: OperationRef,
  read: Parameters<OperationVerb['derive']>[0]['read'],
  wantSplit: boolean,
): Promise<Derived> {
  const dm = await read(resources.deployedModels, ref.object ?? '');
  const generation = Number(ref.extra?.[WATCHED_GENERATION_EXTRA] ?? ref.generation ?? 0);
  const state = reconciledState(dm, generation, `DeployedModel ${ref.object ?? ''}`);
  if (state !== 'ready' || dm === undefined) return state === 'ready' ? { done: false } : state;
  const pe = await read(resources.predictionEndpoints, endpointId(ref));
  if (pe === undefined) return { done: false, object: dm };
  if (wantSplit) {
    const wanted = ref.extra?.[SPLIT_EXTRA];
    const effective = isRecord(pe.status) ? pe.status.trafficSplit : undefined;
    if (wanted !== undefined && wanted !== '' && !jsonEqual(JSON.parse(wanted), effective ?? {}))
      return { done: false, object: dm };
  }
  const deployedModel = deployedModelAnswer(pe, [dm], deployedIdOf(dm) ?? '');
  return deployedModel === undefined
    ? { done: false, object: dm }
    : { done: true, response: { deployedModel }, object: dm };
}

const deployModel: OperationVerb = {
  verb: 'deployModel',
  metadataType: `${V1}.DeployModelOperationMetadata`,
  responseType: `${V1}.DeployModelResponse`,
  derive: async ({ ref, read }) => deployedModelReady(ref, read, true),
};

const undeployModel: OperationVerb = {
  verb: 'undeployModel',
  metadataType: `${V1}.UndeployModelOperationMetadata`,
  responseType: `${V1}.UndeployModelResponse`,
  derive: async ({ ref, read }) => deletedState(await read(resources.deployedModels, ref.object ?? ''), ref.uid),
};

const mutateDeployedModel: OperationVerb = {
  verb: 'mutateDeployedModel',
  metadataType: `${V1}.MutateDeployedModelOperationMetadata`,
  responseType: `${V1}.MutateDeployedModelResponse`,
  derive: async ({ ref, read }) => deployedModelReady(ref, read, false),
};

/** EndpointService's verbs, for the gateway's OperationVerbs. */
export const ENDPOINT_OPERATION_VERBS: readonly OperationVerb[] = [
  createEndpoint,
  deleteEndpoint,
  deployModel,
  undeployModel,
  mutateDeployedModel,
];

/**
 * The Operation a write answers with (derived at once: usually not done yet), named after the endpoint and watching
 * `object` (the endpoint itself, or the DeployedModel `watched` names) at the generation the write produced, or its
 * uid for a delete.
 */
export function writeOperation(
  ctx: EndpointWritesContext,
  namespace: string,
  resource: string,
  verb: string,
  object: KubeObject,
  manager: string,
  options: { readonly watched?: string; readonly deleted?: boolean; readonly extra?: Record<string, string> } = {},
) {
  const ref: OperationRef = {
    resource,
    verb,
    manager,
    ...(options.watched !== undefined ? { object: options.watched } : {}),
    ...(options.deleted ? { uid: object.metadata.uid ?? '' } : { generation: object.metadata.generation ?? 1 }),
    ...(options.extra !== undefined ? { extra: options.extra } : {}),
  };
  return operationOfWrite(ctx.operations, namespace, ref);
}
