/**
 * DeployedModel reconciler: resolves the endpoint, assigns an id when spec.id is omitted, reports
 * the model's state, and on deletion holds the finalizer while the endpoint's traffic split still
 * sends the model traffic (undeploying a model that serves traffic would fail requests).
 */
import { deployedModelKind } from '../api/prediction/v1/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { reconcileWithFinalizer } from '../runtime/finalizers.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { readinessOf } from './backends.js';
import { chooseId, effectiveId, resolveModelStates } from './deployed-model-ids.js';
import { finalizerFlow, Index, modelEndpointKey, type ReconcilerContext } from './context.js';
import { specValidator } from '../api/spec-validator.js';
import { computeDeployedModelStatus } from './deployed-model-status.js';
import { statusTime } from './status-common.js';
import { specOf } from '../api/typed-spec.js';
import { objectToReconcile, reportStatus } from './prologue.js';
import { applyServing } from './serving/serving-apply.js';
import { servingInput, servingReport } from './serving/serving-model.js';
import { modelResolver, servedSpec } from './model-reference.js';

export function deployedModelReconciler(ctx: ReconcilerContext): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateModel = specValidator(deployedModelKind, ctx.settings);
  const isValidModel = (m: KubeObject): boolean => validateModel(m).length === 0;
  const resolveReference = modelResolver(ctx.informers, ctx.settings);

  const siblingsOf = (model: KubeObject): KubeObject[] => {
    const key = modelEndpointKey(model);
    return key === undefined ? [model] : ctx.informers.deployedModels.byIndex(Index.modelsByEndpoint, key);
  };
  const endpointOf = (model: KubeObject): KubeObject | undefined => {
    const name = specOf.deployedModel(model).endpointRef?.name;
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
    const siblings = siblingsOf(model)
      .filter((m) => m.metadata.uid !== model.metadata.uid)
      .concat(model);
    const state =
      endpoint === undefined
        ? undefined
        : resolveModelStates(siblings, isValidModel, ctx.ids.view).get(model.metadata.name ?? '');
    const backend = readinessOf(ctx.informers, model);
    const reference = resolveReference(model);
    const serving =
      specErrors.length === 0 ? servingReport(ctx.serving, model, state, servedSpec(model, reference)) : undefined;
    return computeDeployedModelStatus({
      model,
      endpoint,
      state,
      specErrors,
      backend,
      serving,
      reference,
      project: ctx.settings.project,
      location: ctx.settings.location,
      now: statusTime(ctx.clock),
    });
  };

  /** Creates or updates the objects of spec.containerSpec (or the named Model version's) once the model is valid and has its id. */
  const runReplicas = async (
    model: KubeObject,
    endpoint: KubeObject | undefined,
    valid: boolean,
    signal: AbortSignal,
  ): Promise<void> => {
    if (ctx.serving === undefined || endpoint === undefined || !valid) return;
    const siblings = siblingsOf(model)
      .filter((m) => m.metadata.uid !== model.metadata.uid)
      .concat(model);
    const state = resolveModelStates(siblings, isValidModel, ctx.ids.view).get(model.metadata.name ?? '');
    const input = servingInput(model, state, servedSpec(model, resolveReference(model)));
    if (input !== undefined) await applyServing({ ...ctx.serving, client: ctx.client, signal }, input);
  };

  return async (req) => {
    const cached = objectToReconcile(ctx, 'deployedModels', req);
    if (cached === undefined) return Action.done();
    return reconcileWithFinalizer(finalizerFlow(ctx, 'deployedModels', req.signal), cached, {
      apply: async (model) => {
        const endpoint = endpointOf(model);
        const valid = isValidModel(model);
        assignIdIfNeeded(model, endpoint, valid);
        await runReplicas(model, endpoint, valid, req.signal);
        return reportStatus(ctx, 'deployedModels', req, model, compute(model), compute);
      },
      cleanup: async (model) => {
        const status = compute(model);
        if (status.releaseFinalizer) return { done: true, result: Action.done() };
        return { done: false, result: await reportStatus(ctx, 'deployedModels', req, model, status, compute) };
      },
      released: (model) => {
        ctx.ids.forget(model.metadata.uid ?? '');
        void ctx.events.record(model, 'Normal', 'Undeployed', 'the endpoint gives this model no traffic; undeployed');
        req.log.info('undeployed; finalizer removed');
      },
    });
  };
}
