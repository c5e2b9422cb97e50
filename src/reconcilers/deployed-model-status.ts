/**
 * The status of a DeployedModel as a pure function of the world: the model, its endpoint (if it
 * exists) and the state the id resolution gave it.
 */
import type { FieldError } from '../api/common/field-error.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { Reasons, type DeployedModelReason, type Written } from '../api/common/conditions.js';
import type { DeployedModelStatus as StoredStatus } from '../api/prediction/v1/deployed-model-schema.js';
import { endpointNameOf } from '../api/prediction/v1/names.js';
import type { BackendReadiness } from './backend-readiness.js';
import type { ModelState } from './deployed-model-ids.js';
import type { ServingReport } from './serving/serving-model.js';
import type { ModelResolution } from './model-reference.js';
import { deployTimeOf, trafficSplitOf } from './prediction-endpoint-status.js';
import { conditionsOf, invalidSpecMessage, isRecord, withReadyCondition, type ReadyVerdict } from './status-common.js';
import { specOf, statusOf } from '../api/typed-spec.js';

/** What the reconciler writes: the CRD's status type (`z.infer` of its schema) with the fields it always sets. */
export type DeployedModelStatus = Written<StoredStatus, 'observedGeneration' | 'conditions'>;

export interface DeployedModelWorld {
  readonly model: KubeObject;
  /** The PredictionEndpoint named by spec.endpointRef.name, if it exists (being deleted or not). */
  readonly endpoint: KubeObject | undefined;
  /** From resolveModelStates over the endpoint's models; `undefined` when there is no endpoint. */
  readonly state: ModelState | undefined;
  readonly specErrors: readonly FieldError[];
  /** Whether `spec.backend` can be called (backendReadiness over the Service and EndpointSlice caches). */
  readonly backend: BackendReadiness;
  /** What the replicas of spec.containerSpec show (servingReport); undefined without containerSpec or id. */
  readonly serving?: ServingReport | undefined;
  /** What spec.model names (model-reference.ts); absent or `inline` for a model that carries its own server. */
  readonly reference?: ModelResolution | undefined;
  /** The `--project` template of endpoint names (`{namespace}` replaced). */
  readonly project: string;
  readonly location: string;
  readonly now: string;
}

export interface DeployedModelOutcome {
  readonly status: DeployedModelStatus;
  readonly verdict: ReadyVerdict<DeployedModelReason>;
  /** Deleting and the endpoint gives the model no traffic (or is gone): remove the finalizer. */
  readonly releaseFinalizer: boolean;
}

/** The traffic the endpoint still gives a model being deleted (what holds its undeploy). */
function trafficWhileDeleting(world: DeployedModelWorld): number {
  const { model, endpoint, state } = world;
  if (model.metadata.deletionTimestamp === undefined || endpoint === undefined || state?.state !== 'deployed') return 0;
  // The split in effect may still route to the model after the spec moved its traffic (a pending switch).
  const inEffect =
    isRecord(endpoint.status) && isRecord(endpoint.status.trafficSplit)
      ? endpoint.status.trafficSplit[state.id]
      : undefined;
  return Math.max(trafficSplitOf(endpoint.spec)?.[state.id] ?? 0, typeof inEffect === 'number' ? inEffect : 0);
}

/**
 * The verdict the model's endpoint lists for it and judges itself by: the model's own, except while its
 * deletion waits for traffic (UndeployBlocked). Such a model still serves (the gateway routes to it until
 * the split moves), so the endpoint is told whether it serves; the waiting is the model's own condition's
 * news, not a failure of its endpoint. Computed from the same world rather than read back from the model's
 * status: the endpoint is then written once with the final answer, not once more when the model's own
 * status catches up.
 */
export function deployedModelServingVerdict(world: DeployedModelWorld): ReadyVerdict {
  const traffic = trafficWhileDeleting(world);
  return traffic > 0 ? servingVerdict(world) : readyVerdict(world, traffic);
}

export function computeDeployedModelStatus(world: DeployedModelWorld): DeployedModelOutcome {
  const { model, endpoint, state } = world;
  const previous = statusOf.deployedModel(model);
  const generation = model.metadata.generation ?? 0;
  const deleting = model.metadata.deletionTimestamp !== undefined;
  const id = state?.state === 'deployed' || state?.state === 'duplicate' ? state.id : previous.id;
  const traffic = trafficWhileDeleting(world);
  const verdict = readyVerdict(world, traffic);

  const status: DeployedModelStatus = {
    observedGeneration: generation,
    conditions: withReadyCondition(conditionsOf(model.status), verdict, generation, world.now),
  };
  if (id !== undefined) status.id = id;
  if (endpoint !== undefined)
    status.endpoint = endpointNameOf(
      { namespace: endpoint.metadata.namespace ?? '', name: endpoint.metadata.name ?? '' },
      world.project,
      world.location,
    );
  else {
    const recorded = previous.endpoint;
    if (recorded !== undefined) status.endpoint = recorded;
  }
  Object.assign(status, referenceStatus(world.reference, previous, specOf.deployedModel(model).model ?? ''));
  const serving = world.serving;
  if (serving !== undefined) {
    status.replicaCount = serving.replicaCount;
    status.availableReplicaCount = serving.availableReplicaCount;
    status.deploymentStage = deleting ? 'DEPLOYMENT_TERMINATED' : serving.stage;
    status.serving = serving.names;
  }
  const deployTime =
    previous.deployTime ??
    (state?.state === 'deployed' && endpoint !== undefined ? deployTimeOf(model, endpoint) : undefined);
  if (deployTime !== undefined) status.deployTime = deployTime;
  return { status, verdict, releaseFinalizer: deleting && traffic <= 0 };
}

/**
 * The version a reference serves, kept while its Model or version is missing (GitOps may be re-creating it):
 * the pin survives, and so does what the gateway calls.
 */
function referenceStatus(
  reference: ModelResolution | undefined,
  previous: ReturnType<typeof statusOf.deployedModel>,
  specModel: string,
): Partial<DeployedModelStatus> {
  if (reference?.form === 'resolved')
    return {
      modelVersionId: reference.version.id,
      modelReference: specModel,
      containerSpec: reference.version.containerSpec,
      ...(reference.aliasVersionId === undefined ? {} : { aliasVersionId: reference.aliasVersionId }),
    };
  if (reference === undefined || reference.form === 'inline') return {};
  const kept: Partial<DeployedModelStatus> = {};
  if (previous.modelVersionId !== undefined) kept.modelVersionId = previous.modelVersionId;
  if (previous.modelReference !== undefined) kept.modelReference = previous.modelReference;
  if (previous.containerSpec !== undefined) kept.containerSpec = previous.containerSpec;
  return kept;
}

function readyVerdict(world: DeployedModelWorld, traffic: number): ReadyVerdict<DeployedModelReason> {
  const { model, state } = world;
  const endpointName = specOf.deployedModel(model).endpointRef?.name ?? '';
  if (model.metadata.deletionTimestamp !== undefined) {
    if (traffic > 0 && state?.state === 'deployed') {
      const serving = servingVerdict(world);
      const meanwhile =
        serving.status === 'True'
          ? 'it keeps serving its share meanwhile'
          : `meanwhile its calls fail: ${serving.reason}: ${serving.message}`;
      return {
        status: 'False',
        reason: Reasons.UndeployBlocked,
        message: `undeploy waits: spec.trafficSplit[${state.id}] of PredictionEndpoint "${endpointName}" still gives this model ${traffic}% of the traffic (or status.trafficSplit, the split in effect while a new one waits for its models), and ${meanwhile}; move that traffic to another model (or remove the key) and the deletion completes once it is in effect`,
      };
    }
    return {
      status: 'False',
      reason: Reasons.Undeploying,
      message: 'the endpoint gives this model no traffic; undeploying',
    };
  }
  return servingVerdict(world);
}

/** The verdict of a model that is not being deleted, and whether a model being deleted still serves. */
function servingVerdict(world: DeployedModelWorld): ReadyVerdict<DeployedModelReason> {
  const { model, endpoint, state } = world;
  const endpointName = specOf.deployedModel(model).endpointRef?.name ?? '';
  if (world.specErrors.length > 0) {
    return { status: 'False', reason: Reasons.InvalidSpec, message: invalidSpecMessage(world.specErrors) };
  }
  const reference = world.reference;
  if (reference?.form === 'missing-model') {
    return {
      status: 'False',
      reason: Reasons.ModelNotFound,
      message: `spec.model: Model "${reference.objectName}" (${reference.modelName}) not found in namespace "${model.metadata.namespace ?? ''}"; apply it (the model is deployed as soon as it exists)`,
    };
  }
  if (reference?.form === 'missing-version') {
    return { status: 'False', reason: Reasons.ModelVersionNotFound, message: `spec.model: ${reference.message}` };
  }
  if (endpoint === undefined) {
    return {
      status: 'False',
      reason: Reasons.EndpointNotFound,
      message: `spec.endpointRef.name: PredictionEndpoint "${endpointName}" not found in namespace "${model.metadata.namespace ?? ''}"; create it (the model is deployed as soon as it exists)`,
    };
  }
  if (state?.state === 'duplicate') {
    return {
      status: 'False',
      reason: Reasons.DuplicateId,
      message: `spec.id: Duplicate value: "${state.id}": DeployedModel "${state.owner}" of PredictionEndpoint "${endpointName}" already uses this id; choose another id or omit spec.id to have one assigned`,
    };
  }
  if (state?.state !== 'deployed') {
    return { status: 'Unknown', reason: Reasons.Deploying, message: 'an id is being assigned' };
  }
  const deployed = `deployed to PredictionEndpoint "${endpointName}" with id ${state.id}${versionNote(reference)}`;
  const serving = world.serving;
  if (serving !== undefined) {
    const v = serving.verdict;
    // Available replicas are not yet routable ones: the EndpointSlice controller lists a ready pod a moment
    // after the Deployment counts it, and the gateway routes by the slices. Ready before that would let a
    // pending split switch to this model while its calls still find no endpoint.
    if (v.status === 'True' && world.backend.state === 'unavailable')
      return {
        status: 'False',
        reason: Reasons.ReplicasStarting,
        message: `${deployed}, not serving yet: ${v.message}, but ${world.backend.message}`,
      };
    return {
      ...v,
      message: v.status === 'True' ? `${deployed}; ${v.message}` : `${deployed}, not serving yet: ${v.message}`,
    };
  }
  const backend = world.backend;
  if (backend.state === 'unavailable') {
    return {
      status: 'False',
      reason: Reasons.BackendUnavailable,
      message: `${deployed}, but its model server cannot be called: ${backend.message}`,
    };
  }
  return { status: 'True', reason: Reasons.Reconciled, message: `${deployed}; ${backendNote(backend)}` };
}

/** Which version of which Model a reference serves, and that it stays there when its alias moved. */
function versionNote(reference: ModelResolution | undefined): string {
  if (reference?.form !== 'resolved') return '';
  const served = ` serving version ${reference.version.id} of Model "${reference.objectName}"`;
  if (reference.aliasVersionId === undefined) return served;
  return `${served} (alias "${reference.alias ?? ''}" now names version ${reference.aliasVersionId}; this model keeps serving version ${reference.version.id}, as Vertex deploys a version, not an alias: to serve version ${reference.aliasVersionId}, deploy a new DeployedModel and move the endpoint's traffic split to it)`;
}

function backendNote(backend: BackendReadiness): string {
  switch (backend.state) {
    case 'ready':
      return `served by ${backend.summary}`;
    case 'url':
      return `served by ${backend.url} (a URL backend is not probed)`;
    default:
      return 'no spec.backend: recorded, not callable';
  }
}
