/**
 * PredictionEndpoint reconciler: keeps the finalizer on while the endpoint lives, computes its
 * status from the endpoint and the DeployedModels that reference it, and lets the deletion
 * through once no DeployedModel references it any more.
 */
import { predictionEndpointKind, deployedModelKind } from '../api/prediction/v1/kinds.js';
import { PREDICTION_FINALIZER } from '../api/prediction/v1/names.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../runtime/finalizers.js';
import { objectKey, type KubeObject } from '../runtime/kube-object.js';
import { readinessOf } from './backends.js';
import { resolveModelStates } from './deployed-model-ids.js';
import { deployedModelVerdict } from './deployed-model-status.js';
import { FIELD_MANAGER, Index, resources, specValidator, type ReconcilerContext } from './context.js';
import { computePredictionEndpointStatus } from './prediction-endpoint-status.js';
import { rfc3339 } from './status-common.js';
import { writeStatus } from './status-write.js';

export const PREDICTION_ENDPOINT_FINALIZER = PREDICTION_FINALIZER;

export function predictionEndpointReconciler(ctx: ReconcilerContext): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateEndpoint = specValidator(predictionEndpointKind, ctx.settings);
  const validateModel = specValidator(deployedModelKind, ctx.settings);
  const isValidModel = (m: KubeObject): boolean => validateModel(m).length === 0;

  const modelsOf = (endpoint: KubeObject): KubeObject[] =>
    ctx.informers.deployedModels.byIndex(Index.modelsByEndpoint, objectKey(endpoint.metadata.namespace, endpoint.metadata.name ?? ''));

  const compute = (endpoint: KubeObject): ReturnType<typeof computePredictionEndpointStatus> => {
    const models = modelsOf(endpoint);
    const states = resolveModelStates(models, isValidModel, ctx.ids.view);
    const { project, location } = ctx.settings;
    const now = rfc3339(ctx.now());
    return computePredictionEndpointStatus({
      endpoint,
      models,
      states,
      specErrors: validateEndpoint(endpoint),
      // Only deployed (so valid) models are listed: the model's own verdict, from the same caches.
      modelReadiness: (model) =>
        deployedModelVerdict({ model, endpoint, state: states.get(model.metadata.name ?? ''), specErrors: [], backend: readinessOf(ctx.informers, model), project, location, now }),
      project,
      location,
      gatewayUrl: ctx.settings.gatewayUrl,
      now,
    });
  };

  return async (req) => {
    let endpoint = ctx.informers.predictionEndpoints.get(req.namespace, req.name);
    if (endpoint === undefined) return Action.done();
    if (ctx.ownWrites.isStale(endpoint)) return Action.done(); // the event of our own newer write re-queues it // gone: nothing to do, not an error
    const deleting = endpoint.metadata.deletionTimestamp !== undefined;
    if (deleting && !hasFinalizer(endpoint, PREDICTION_ENDPOINT_FINALIZER)) return Action.done();
    if (!deleting && !hasFinalizer(endpoint, PREDICTION_ENDPOINT_FINALIZER)) {
      // Continue with the patched object: its resourceVersion is the one the status write must carry.
      const before = endpoint;
      endpoint = await addFinalizer(ctx.client, resources.predictionEndpoints, endpoint, PREDICTION_ENDPOINT_FINALIZER, FIELD_MANAGER);
      ctx.ownWrites.replaced(before, endpoint);
      if (endpoint === undefined) return Action.done();
    }
    if (deleting && compute(endpoint).releaseFinalizer) {
      await removeFinalizer(ctx.client, resources.predictionEndpoints, endpoint, PREDICTION_ENDPOINT_FINALIZER, FIELD_MANAGER);
      req.log.info('no DeployedModel references the endpoint any more; finalizer removed');
      return Action.done();
    }
    const hold = ctx.grace.holdMs(endpoint, compute(endpoint).verdict.reason);
    if (hold > 0) return Action.requeueAfter(hold);
    await writeStatus(ctx, 'predictionEndpoints', predictionEndpointKind, endpoint, compute);
    return Action.done();
  };
}
