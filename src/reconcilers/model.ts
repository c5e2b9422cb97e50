/**
 * Model reconciler: reports the Model's resource name, when each version was created and which DeployedModels
 * serve which version (status.deployedModels, which keeps a deployed Model and its served versions from being
 * deleted: model-policy.ts). A Model owns nothing and holds no finalizer: nothing is cleaned up when it goes.
 */
import { modelKind } from '../api/prediction/v1/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { objectKey, type KubeObject } from '../api/common/kube-object.js';
import type { ReconcilerContext } from './context.js';
import { specValidator } from '../api/spec-validator.js';
import { statusTime } from './status-common.js';
import { objectToReconcile, reportStatus } from './prologue.js';
import { MODEL_REFERENCE_INDEX, modelResolver } from './model-reference.js';
import { computeModelStatus } from './model-status.js';

export function modelReconciler(ctx: ReconcilerContext): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validate = specValidator(modelKind, ctx.settings);
  const resolve = modelResolver(ctx.informers, ctx.settings);

  const compute = (model: KubeObject): ReturnType<typeof computeModelStatus> => {
    const key = objectKey(model.metadata.namespace, model.metadata.name ?? '');
    const references = ctx.informers.deployedModels
      .byIndex(MODEL_REFERENCE_INDEX, key)
      .map((deployedModel) => ({ deployedModel, resolution: resolve(deployedModel) }));
    return computeModelStatus({
      model,
      specErrors: validate(model),
      references,
      project: ctx.settings.project,
      location: ctx.settings.location,
      now: statusTime(ctx.clock),
    });
  };

  return async (req) => {
    const model = objectToReconcile(ctx, 'models', req, { skipDeleting: true });
    if (model === undefined) return Action.done();
    return reportStatus(ctx, 'models', req, model, compute(model), compute, { holdOrderingStates: false });
  };
}
