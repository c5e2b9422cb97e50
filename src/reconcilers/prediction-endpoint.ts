/**
 * PredictionEndpoint reconciler: keeps the finalizer on while the endpoint lives, computes its
 * status from the endpoint and the DeployedModels that reference it, and lets the deletion
 * through once no DeployedModel references it any more.
 */
import { predictionEndpointKind, deployedModelKind } from '../api/prediction/v1/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { reconcileWithFinalizer } from '../runtime/finalizers.js';
import { objectKey, type KubeObject } from '../api/common/kube-object.js';
import { readinessOf } from './backends.js';
import { resolveModelStates } from './deployed-model-ids.js';
import { deployedModelServingVerdict } from './deployed-model-status.js';
import { servingReport } from './serving/serving-model.js';
import { modelResolver, servedSpec } from './model-reference.js';
import { finalizerFlow, Index, type ReconcilerContext } from './context.js';
import { specValidator } from '../api/spec-validator.js';
import { computePredictionEndpointStatus } from './prediction-endpoint-status.js';
import { statusTime } from './status-common.js';
import { objectToReconcile, reportStatus } from './prologue.js';

export function predictionEndpointReconciler(
  ctx: ReconcilerContext,
): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateEndpoint = specValidator(predictionEndpointKind, ctx.settings);
  const validateModel = specValidator(deployedModelKind, ctx.settings);
  const isValidModel = (m: KubeObject): boolean => validateModel(m).length === 0;
  const resolveReference = modelResolver(ctx.informers, ctx.settings);

  const modelsOf = (endpoint: KubeObject): KubeObject[] =>
    ctx.informers.deployedModels.byIndex(
      Index.modelsByEndpoint,
      objectKey(endpoint.metadata.namespace, endpoint.metadata.name ?? ''),
    );

  const compute = (endpoint: KubeObject): ReturnType<typeof computePredictionEndpointStatus> => {
    const models = modelsOf(endpoint);
    const states = resolveModelStates(models, isValidModel, ctx.ids.view);
    const { project, location } = ctx.settings;
    const now = statusTime(ctx.clock);
    return computePredictionEndpointStatus({
      endpoint,
      models,
      states,
      specErrors: validateEndpoint(endpoint),
      // Only deployed (so valid) models are listed: whether each serves, from the same caches as its own verdict.
      modelReadiness: (model) => {
        const state = states.get(model.metadata.name ?? '');
        const reference = resolveReference(model);
        return deployedModelServingVerdict({
          model,
          endpoint,
          state,
          specErrors: [],
          backend: readinessOf(ctx.informers, model),
          serving: servingReport(ctx.serving, model, state, servedSpec(model, reference)),
          reference,
          project,
          location,
          now,
        });
      },
      project,
      location,
      gatewayUrl: ctx.settings.gatewayUrl,
      now,
    });
  };

  return async (req) => {
    const cached = objectToReconcile(ctx, 'predictionEndpoints', req);
    if (cached === undefined) return Action.done();
    return reconcileWithFinalizer(finalizerFlow(ctx, 'predictionEndpoints', req.signal), cached, {
      apply: async (endpoint) => reportStatus(ctx, 'predictionEndpoints', req, endpoint, compute(endpoint), compute),
      cleanup: async (endpoint) => {
        const status = compute(endpoint);
        if (status.releaseFinalizer) return { done: true, result: Action.done() };
        return { done: false, result: await reportStatus(ctx, 'predictionEndpoints', req, endpoint, status, compute) };
      },
      released: () => req.log.info('no DeployedModel references the endpoint any more; finalizer removed'),
    });
  };
}
