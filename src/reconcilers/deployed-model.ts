/**
 * DeployedModel reconciler: resolves the endpoint, assigns an id when spec.id is omitted, reports
 * the model's state, and on deletion holds the finalizer while the endpoint's traffic split still
 * sends the model traffic (undeploying a model that serves traffic would fail requests).
 */
import { deployedModelKind } from '../api/prediction/v1/kinds.js';
import { PREDICTION_FINALIZER } from '../api/prediction/v1/names.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../runtime/finalizers.js';
import type { KubeObject } from '../runtime/kube-object.js';
import { readinessOf } from './backends.js';
import { chooseId, effectiveId, resolveModelStates } from './deployed-model-ids.js';
import { FIELD_MANAGER, Index, modelEndpointKey, resources, specValidator, type ReconcilerContext } from './context.js';
import { computeDeployedModelStatus } from './deployed-model-status.js';
import { rfc3339, stringAt } from './status-common.js';
import { writeStatus } from './status-write.js';

/** The same finalizer name as the endpoint's: one name per API group, as kubebuilder projects do. */
export const DEPLOYED_MODEL_FINALIZER = PREDICTION_FINALIZER;

export function deployedModelReconciler(ctx: ReconcilerContext): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateModel = specValidator(deployedModelKind, ctx.settings);
  const isValidModel = (m: KubeObject): boolean => validateModel(m).length === 0;

  const siblingsOf = (model: KubeObject): KubeObject[] => {
    const key = modelEndpointKey(model);
    return key === undefined ? [model] : ctx.informers.deployedModels.byIndex(Index.modelsByEndpoint, key);
  };
  const endpointOf = (model: KubeObject): KubeObject | undefined => {
    const name = stringAt(model.spec, 'endpointRef', 'name');
    return name === undefined ? undefined : ctx.informers.predictionEndpoints.get(model.metadata.namespace, name);
  };

  /**
   * Picks an id for a model without one. Choosing and recording happen with no `await` in
   * between, so on Node's single thread no other reconcile of the same endpoint can interleave:
   * assignments for one endpoint are serialised by construction, and `ctx.ids` makes the
   * choice visible to the next one before the status write reaches the cache.
   */
  const assignIdIfNeeded = (model: KubeObject, endpoint: KubeObject | undefined, valid: boolean): void => {
    if (endpoint === undefined || !valid || model.metadata.deletionTimestamp !== undefined) return;
    if (effectiveId(model, ctx.ids.view) !== undefined) return;
    ctx.ids.record(model.metadata.uid ?? '', chooseId(model, siblingsOf(model), ctx.ids.view));
  };

  const compute = (model: KubeObject): ReturnType<typeof computeDeployedModelStatus> => {
    const endpoint = endpointOf(model);
    const specErrors = validateModel(model);
    // The model as the cache sees it may be older than `model` (a conflict re-read): resolve with `model` itself.
    const siblings = siblingsOf(model).filter((m) => m.metadata.uid !== model.metadata.uid).concat(model);
    const state = endpoint === undefined ? undefined : resolveModelStates(siblings, isValidModel, ctx.ids.view).get(model.metadata.name ?? '');
    const backend = readinessOf(ctx.informers, model);
    return computeDeployedModelStatus({ model, endpoint, state, specErrors, backend, project: ctx.settings.project, location: ctx.settings.location, now: rfc3339(ctx.now()) });
  };

  return async (req) => {
    let model = ctx.informers.deployedModels.get(req.namespace, req.name);
    if (model === undefined) return Action.done();
    if (ctx.ownWrites.isStale(model)) return Action.done(); // the event of our own newer write re-queues it
    const deleting = model.metadata.deletionTimestamp !== undefined;
    if (deleting && !hasFinalizer(model, DEPLOYED_MODEL_FINALIZER)) return Action.done();
    if (!deleting && !hasFinalizer(model, DEPLOYED_MODEL_FINALIZER)) {
      const before = model;
      model = await addFinalizer(ctx.client, resources.deployedModels, model, DEPLOYED_MODEL_FINALIZER, FIELD_MANAGER);
      ctx.ownWrites.replaced(before, model);
      if (model === undefined) return Action.done();
    }
    assignIdIfNeeded(model, endpointOf(model), isValidModel(model));
    if (deleting && compute(model).releaseFinalizer) {
      await removeFinalizer(ctx.client, resources.deployedModels, model, DEPLOYED_MODEL_FINALIZER, FIELD_MANAGER);
      ctx.ids.forget(model.metadata.uid ?? '');
      void ctx.events.record(model, 'Normal', 'Undeployed', 'the endpoint gives this model no traffic; undeployed');
      req.log.info('undeployed; finalizer removed');
      return Action.done();
    }
    const hold = ctx.grace.holdMs(model, compute(model).verdict.reason);
    if (hold > 0) return Action.requeueAfter(hold);
    await writeStatus(ctx, 'deployedModels', deployedModelKind, model, compute);
    return Action.done();
  };
}
